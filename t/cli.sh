#!/bin/sh
# End to end: the command line's guidance: `refit help CMD` and -h as --help, the nearest
# command or option suggested for a typo, and refusals that say why.
. "${SRCDIR:-.}/t/lib.sh"

# ---- help ----
for cmd in plan sim run search calibrate report models show diff; do
    "$REFIT" "$cmd" --help >"$tmp/long" 2>&1
    "$REFIT" "$cmd" -h >"$tmp/short" 2>&1
    r=$?
    "$REFIT" help "$cmd" >"$tmp/help" 2>&1
    is "$r$?|$(cmp -s "$tmp/long" "$tmp/short"; echo $?)$(cmp -s "$tmp/long" "$tmp/help"
    echo $?)|$(head -n 1 "$tmp/help" | cut -d ' ' -f 1-3)" "00|00|usage: refit $cmd" \
        "refit $cmd -h and refit help $cmd print refit $cmd --help, exit 0"
done
"$REFIT" sim "$SRCDIR/t/data/sim/qwen3-30b.lua" --db "$tmp/never.db" -h >"$tmp/out"
is "$?|$(head -n 1 "$tmp/out")|$(test -e "$tmp/never.db"; echo $?)" \
    "0|usage: refit sim SCENARIO [--strategy S | --compare] [--db FILE] [--label TEXT] [--json]|1" \
    "-h after the arguments is help too, and nothing is run or created"
"$REFIT" -h >"$tmp/short"
"$REFIT" --help >"$tmp/long"
"$REFIT" help >"$tmp/help"
is "$(cmp -s "$tmp/long" "$tmp/short"; echo $?)$(cmp -s "$tmp/long" "$tmp/help"; echo $?)|$(head -n 1 "$tmp/help")" \
    "00|usage: refit <command> [options]" "refit -h and refit help are refit --help"
"$REFIT" help simm >"$tmp/out" 2>"$tmp/err"
is "$?|$(cat "$tmp/out")|$(cat "$tmp/err")" \
    "2||refit: unknown command 'simm' (did you mean 'sim'?)" "refit help of a typo suggests"
"$REFIT" help sim plan 2>"$tmp/err"
is "$?|$(cat "$tmp/err")" "2|refit: help takes one command, got 2; see refit --help" \
    "refit help takes one command"

# ---- unknown commands: the nearest name (one edit; two from six letters; a swap is one) ----
t_cmd() { # t_cmd TYPED WANTED-STDERR
    "$REFIT" "$1" >"$tmp/out" 2>"$tmp/err"
    is "$?|$(cat "$tmp/out")|$(cat "$tmp/err")" "2||$2" "refit $1: $2"
}
t_cmd simm "refit: unknown command 'simm' (did you mean 'sim'?)"
t_cmd smi "refit: unknown command 'smi' (did you mean 'sim'?)"
t_cmd sho "refit: unknown command 'sho' (did you mean 'show'?)"
t_cmd modles "refit: unknown command 'modles' (did you mean 'models'?)"
t_cmd calibarte "refit: unknown command 'calibarte' (did you mean 'calibrate'?)"
t_cmd serach "refit: unknown command 'serach' (did you mean 'search'?)"
t_cmd xyz "refit: unknown command 'xyz'; see refit --help"
t_cmd rnu "refit: unknown command 'rnu' (did you mean 'run'?)"
t_cmd ruin "refit: unknown command 'ruin' (did you mean 'run'?)"
t_cmd pl "refit: unknown command 'pl'; see refit --help"

# ---- unknown options: the nearest of the command's long options ----
t_opt() { # t_opt WANTED-STDERR ARGS...
    want=$1
    shift
    "$REFIT" "$@" >"$tmp/out" 2>"$tmp/err"
    is "$?|$(cat "$tmp/out")|$(cat "$tmp/err")" "2||$want" "refit $*: $want"
}
t_opt "refit: unknown option --jsn, did you mean --json? (see refit sim --help)" sim x.lua --jsn
t_opt "refit: unknown option --comapre, did you mean --compare? (see refit sim --help)" \
    sim x.lua --comapre
t_opt "refit: unknown option --stratgey, did you mean --strategy? (see refit sim --help)" \
    sim x.lua --stratgey=auto
t_opt "refit: unknown option --dbb, did you mean --db? (see refit show --help)" show 1 --dbb f
t_opt "refit: unknown option --lable, did you mean --label? (see refit plan --help)" \
    plan x.lua --lable a
# "jsn" is two edits from report's --run: too far for a three-letter name.
t_opt "refit: unknown option --jsn (see refit report --help)" report --jsn
t_opt "refit: unknown option --zzzzz (see refit models --help)" models --zzzzz
t_opt "refit: unknown option -x (see refit models --help)" models -x

t_opt "refit: unknown option --clustr, did you mean --cluster? (see refit calibrate --help)" \
    calibrate --db x.db --clustr h100

# ---- refusals that say why ----
t_opt "refit: --compare with --strategy reshard: --compare already runs every strategy, \
reshard among them, each as its own run; drop --strategy for all of them, or --compare for \
reshard alone (see refit sim --help)" sim "$SRCDIR/t/data/sim/qwen3-30b.lua" --db "$tmp/c.db" \
    --compare --strategy reshard
is "$(test -e "$tmp/c.db"; echo $?)" 1 "and no database is created"
t_opt "refit: --strategy: unknown strategy 'fast' (broadcast, reshard, hierarchical, hybrid, \
auto) (see refit sim --help)" sim x.lua --compare --strategy fast

done_testing
