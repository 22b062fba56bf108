#!/bin/sh
# End to end: `refit sim` shows its phases and auto's candidates on stderr when stderr is a
# terminal (a pseudo-terminal from util-linux's script(1)), clears that line before its
# table, and prints nothing on stderr when piped or with --json. `refit run` shows its runs.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data
if ! command -v script >/dev/null 2>&1; then
    echo "1..0 # SKIP script(1) (util-linux) is not installed: no pseudo-terminal to test on"
    exit 0
fi
# on_tty OUT CMD...: runs CMD with stdin, stdout and stderr on a pseudo-terminal; OUT gets
# what the terminal showed (carriage returns and escapes kept).
on_tty() {
    out=$1
    shift
    script -qec "$*" /dev/null >"$out" 2>&1 </dev/null
}

on_tty "$tmp/tty.txt" "'$REFIT' sim '$data/describe/plain.lua' --strategy auto --db '$tmp/a.db'"
ok $? "refit sim --strategy auto on a terminal succeeds"
# Each redraw starts with a carriage return; the phases are named in order.
grep -q "$(printf '\r')refit sim: load, [0-9]*s elapsed" "$tmp/tty.txt"
ok $? "the terminal shows the load phase with its elapsed time"
grep -q "refit sim: auto: bounded candidate [0-9]*/[0-9]*, " "$tmp/tty.txt"
ok $? "the terminal shows auto's bounded candidates as k/N"
grep -q "refit sim: auto: predicted candidate [1-9]/[1-9]" "$tmp/tty.txt"
ok $? "the terminal shows auto's predicted candidates as k/N"
# The line is cleared (\r ESC[K) right before the table's header, so none of it stays.
grep -q "$(printf '\r\033\\[K')run    strategy" "$tmp/tty.txt"
ok $? "the progress line is cleared before the table"
grep -q "stored in $tmp/a.db as run 1" "$tmp/tty.txt"
ok $? "the table follows, with the run id"

# Piped: stderr is a file, not a terminal.
"$REFIT" sim "$data/describe/plain.lua" --strategy auto --db "$tmp/b.db" >"$tmp/out.txt" 2>"$tmp/err.txt"
ok $? "refit sim --strategy auto, piped, succeeds"
is "$(wc -c <"$tmp/err.txt" | tr -d ' ')" 0 "piped: nothing on stderr"
# --json on a terminal: only the JSON document, no progress (stderr goes to the terminal).
on_tty "$tmp/json.txt" "'$REFIT' sim '$data/describe/plain.lua' --strategy auto --json --db '$tmp/c.db'"
ok $? "refit sim --json on a terminal succeeds"
grep -q "refit sim:" "$tmp/json.txt"
is $? 1 "--json on a terminal: no progress line"
is "$(head -c 1 "$tmp/json.txt")" "{" "--json on a terminal: the output starts with the JSON object"

# --compare names the strategy and its place among them.
on_tty "$tmp/cmp.txt" "'$REFIT' sim '$data/describe/plain.lua' --compare --db '$tmp/d.db'"
ok $? "refit sim --compare on a terminal succeeds"
grep -q "refit sim: reshard (2/5): simulate, " "$tmp/cmp.txt"
ok $? "--compare: the strategy and its place (reshard, 2 of 5) lead the line"

# A study: each run's number and phases while it runs, then its line.
on_tty "$tmp/study.txt" "'$REFIT' run '$data/study/sweep.lua' --db '$tmp/e.db'"
ok $? "refit run on a terminal succeeds"
grep -q "$(printf '\r')refit run: run 3: simulate, [0-9]*s elapsed" "$tmp/study.txt"
ok $? "a study's third run shows its number and phase"
grep -q "$(printf '\r\033\\[K')refit run: run 5 (5 so far): qwen3-30b-a3b broadcast" "$tmp/study.txt"
ok $? "the line is cleared before the run's own line (the fifth: the plan only)"
"$REFIT" run "$data/study/sweep.lua" --db "$tmp/f.db" >/dev/null 2>"$tmp/err.txt"
ok $? "refit run, piped, succeeds"
is "$(wc -c <"$tmp/err.txt" | tr -d ' ')" 0 "a study piped: nothing on stderr"

# A search: its estimates' line on a terminal, none with --json (t/search.sh checks the
# lines that stay).
scen=$SRCDIR/t/data/search/qwen3-30b.lua
on_tty "$tmp/search.txt" "'$REFIT' search '$scen' --gpus 8 --top 1 --db '$tmp/g.db'"
ok $? "refit search on a terminal succeeds"
grep -q "$(printf '\r')refit search: estimated layouts that fit [0-9]*/18, [0-9]*s elapsed" \
    "$tmp/search.txt"
ok $? "the estimates' line counts k of 18 with the elapsed time"
grep -q "$(printf '\r')refit search: full simulation 1: simulate, [0-9]*s elapsed" \
    "$tmp/search.txt"
ok $? "the full simulation shows its phase while it runs"
on_tty "$tmp/sj.txt" "'$REFIT' search '$scen' --gpus 8 --top 1 --json --db '$tmp/h.db'"
ok $? "refit search --json on a terminal succeeds"
grep -q "refit search:" "$tmp/sj.txt"
is $? 1 "refit search --json on a terminal: no progress"
done_testing
