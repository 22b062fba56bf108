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
"$REFIT" help help >"$tmp/help2"
"$REFIT" help -h >"$tmp/help3"
is "$?|$(cmp -s "$tmp/long" "$tmp/help2"; echo $?)$(cmp -s "$tmp/long" "$tmp/help3"; echo $?)" \
    "0|00" "refit help help and refit help -h are refit --help"
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
auto, p2p (under a profile)) (see refit sim --help)" sim x.lua --compare --strategy fast

# ---- refit clusters ----
"$REFIT" clusters >"$tmp/cl" 2>"$tmp/err"
is "$?|$(cat "$tmp/err")|$(head -n 1 "$tmp/cl" | tr -s ' ')" \
    "0||cluster gpus/node nvl_gpus nvlink(GB/s) nics/node nic(GB/s) hbm(GB) pcie(GB/s) nodes/leaf" \
    "refit clusters prints its table"
is "$(awk 'NR > 1 { print $1 }' "$tmp/cl" | tr '\n' ' ')" \
    "$(find "$REFIT_MODELS/clusters" -maxdepth 1 -name '*.lua' | sed 's|.*/||; s/\.lua$//' |
        LC_ALL=C sort | tr '\n' ' ')" \
    "one row per preset file, sorted"
# The figures as models/clusters/dgx-h100.lua and gb200-nvl72.lua write them: 8 GPUs in one
# 8-GPU NVLink domain at 450 GB/s, 8 NICs of 400 Gb/s (50 GB/s), 80 GB HBM, PCIe 5.0 x16
# (64 GB/s), 32 nodes a leaf; 4 GPUs a tray in a 72-GPU domain at 900 GB/s, 186 GB HBM.
is "$(grep '^dgx-h100 ' "$tmp/cl" | tr -s ' ')" "dgx-h100 8 8 450 8 50 80 64 32" \
    "dgx-h100: the preset's figures"
is "$(grep '^gb200-nvl72 ' "$tmp/cl" | tr -s ' ')" "gb200-nvl72 4 72 900 4 50 186 64 32" \
    "gb200-nvl72: the preset's figures"
"$REFIT" clusters --json >"$tmp/cl.json"
is "$("$SQLITE3" :memory: "SELECT group_concat(printf('%s %d %d %g %d %g %g %g %d',
      value->>'name', value->>'gpus_per_node', value->>'nvlink_domain_gpus',
      value->>'nvlink_gbps', value->>'nics_per_node', value->>'nic_gbps', value->>'hbm_gb',
      value->>'pcie_gbps', value->>'nodes_per_leaf'), '|') FROM json_each(readfile('$tmp/cl.json'))")" \
    "$(awk 'NR > 1 { $1 = $1; print }' "$tmp/cl" | tr '\n' '|' | sed 's/|$//')" \
    "--json holds the table's figures"
# A bad preset fails naming its file and field, and prints no part of the table.
mkdir -p "$tmp/models"
cp -r "$REFIT_MODELS/lib" "$REFIT_MODELS/clusters" "$tmp/models/"
sed 's/hbm_gb = 80,/hbm_gb = "lots",/' "$REFIT_MODELS/clusters/dgx-h100.lua" \
    >"$tmp/models/clusters/dgx-h100.lua"
REFIT_MODELS=$tmp/models "$REFIT" clusters >"$tmp/out" 2>"$tmp/err"
is "$?|$(cat "$tmp/out")|$(cat "$tmp/err")" "1||refit: $tmp/models/clusters/dgx-h100.lua:$(grep -n \
    'hbm_gb = "lots"' "$tmp/models/clusters/dgx-h100.lua" | cut -d: -f1): hbm_gb: expected a \
number > 0 and <= 1000000, got 'lots'" \
    "a bad preset: exit 1, its file:line and field, nothing on stdout"
t_opt "refit: clusters takes no argument 'dgx-h100' (see refit clusters --help)" clusters dgx-h100

# An unknown model or cluster names its file:line and field, suggests the nearest preset
# and lists every one: the very names `refit models` and `refit clusters` show.
quoted() { awk 'NR > 1 { printf "%s'"'"'%s'"'"'", (NR > 2 ? ", " : ""), $1 }'; }
models=$("$REFIT" models | quoted)
clusters=$("$REFIT" clusters | quoted)
"$REFIT" sim "$SRCDIR/t/data/bad/model-typo.lua" --db "$tmp/typo.db" 2>"$tmp/err"
is "$?|$(cat "$tmp/err")" "1|refit: $SRCDIR/t/data/bad/model-typo.lua:4: model: unknown model \
'deepseek-v4' (did you mean 'deepseek-v3'?): there is no $REFIT_MODELS/deepseek-v4.lua; the \
models refit ships are $models, or give the path of a model file" \
    "model = 'deepseek-v4': the nearest model and every one"
sed 's/system = "dgx-h100"/system = "dgx-h10"/' "$SRCDIR/t/data/bad/model-typo.lua" |
    sed 's/deepseek-v4/deepseek-v3/' >"$tmp/cluster-typo.lua"
"$REFIT" plan "$tmp/cluster-typo.lua" --db "$tmp/typo.db" 2>"$tmp/err"
is "$?|$(cat "$tmp/err")" "1|refit: $tmp/cluster-typo.lua:3: cluster.system: unknown cluster \
'dgx-h10' (did you mean 'dgx-h100'?): there is no $REFIT_MODELS/clusters/dgx-h10.lua; the \
clusters refit ships are $clusters, or give the path of a cluster file" \
    "cluster.system = 'dgx-h10': the nearest cluster and every one"
is "$(test -e "$tmp/typo.db"; echo $?)" 1 "neither writes a database"

# The README's JSON key tables (Commands, JSON output) list exactly the keys printed, nested
# ones one level deep (`memory.train`, `layouts[].rank`; a role's name under `roles` is
# data, not a key), so the documentation cannot drift from the output.
readme_keys() { # readme_keys 'refit sim --json': the first column of that table
    awk -v h="#### \`$1\`" '$0 == h { on = 1; next }
        on && /^\| `/ { t = 1; split($0, c, "`"); print c[2]; next }
        on && /^\|/ { t = 1; next } on && t { exit }' "$SRCDIR/README.md" | sort
}
json_keys() { # json_keys FILE...: every key path printed, arrays as [], two levels at most
    for f in "$@"; do
        "$SQLITE3" :memory: "SELECT fullkey FROM json_tree(readfile('$f')) WHERE fullkey <> '\$'"
    done | sed 's/^\$\.//; s/"//g; s/\[[0-9]*\]/[]/g' | grep -v '\[\]$' |
        grep -v '^roles\.' | awk -F. 'NF <= 2' | sort -u
}
plain=$SRCDIR/t/data/describe/plain.lua
"$REFIT" sim "$plain" --json --db "$tmp/k.db" >"$tmp/k1.json" &&
    "$REFIT" sim "$plain" --json --strategy auto --db "$tmp/k.db" >"$tmp/k2.json" &&
    "$REFIT" sim "$SRCDIR/t/data/framework/nemo-rl.lua" --json --db "$tmp/k.db" >"$tmp/k3.json" &&
    "$REFIT" sim "$plain" --json --strategy auto --max-memory 0.00003 --db "$tmp/k.db" \
        >"$tmp/k8.json" &&
    sed 's/^}$/    overlap = { engines = "rolling" },\n}/;
         s|"../exec/tiny-llama.lua"|"'"$SRCDIR"'/t/data/exec/tiny-llama.lua"|' "$plain" \
        >"$tmp/overlap.lua" &&
    "$REFIT" sim "$tmp/overlap.lua" --json --db "$tmp/k.db" >"$tmp/k9.json"
ok $? "refit sim --json: a plain run, an auto run (and one left to broadcasts by --max-memory), a framework profile's, an overlapped one"
is "$(json_keys "$tmp/k1.json" "$tmp/k2.json" "$tmp/k3.json" "$tmp/k8.json" "$tmp/k9.json")" \
    "$(readme_keys 'refit sim --json')" \
    "README lists exactly the keys refit sim --json prints"
"$REFIT" plan "$plain" --json --db "$tmp/k.db" >"$tmp/k4.json"
is "$(json_keys "$tmp/k4.json")" "$(readme_keys 'refit plan --json')" \
    "README lists exactly the keys refit plan --json prints"
scen=$SRCDIR/t/data/search/qwen3-30b.lua
"$REFIT" search "$scen" --gpus 8 --top 1 --json --db "$tmp/k5.db" >"$tmp/k5.json" &&
    "$REFIT" search "$scen" --gpus 8 --top 1 --strategy auto --json --db "$tmp/k6.db" \
        >"$tmp/k6.json" &&
    "$REFIT" search "$SRCDIR/t/data/search/qwen3-30b-nemo-rl.lua" --gpus 8 --top 1 --json \
        --db "$tmp/k7.db" >"$tmp/k7.json"
ok $? "refit search --json, reshard, auto and under a framework profile"
is "$(json_keys "$tmp/k5.json" "$tmp/k6.json" "$tmp/k7.json")" \
    "$(readme_keys 'refit search --json')" \
    "README lists exactly the keys refit search --json prints"
is "$(readme_keys 'refit sim --json' | wc -l | tr -d ' ')" 60 "the sim table has its 60 rows"

done_testing
