#!/bin/sh
# End to end: `refit run` on a small study: its table, its stored runs and labels, and the
# error of a study that builds a bad scenario.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/study.db
"$REFIT" run "$SRCDIR/t/data/study/sweep.lua" --db "$db" >"$tmp/out" 2>"$tmp/err"
ok $? "refit run succeeds"
is "$(head -1 "$tmp/out")" "sweep" "the study prints its table's title"
is "$(sed -n 2p "$tmp/out" | tr -s ' ')" "infer_gpus strategy predicted s fabric GB" \
    "then the header"
is "$(grep -c -E '^ +(8|16) +(reshard|hierarchical) ' "$tmp/out")" 4 "one row per simulation"
is "$(grep -c -E 'broadcast +- +-$' "$tmp/out")" 1 "a plan-only run has no prediction"
is "$(sql "$db" "SELECT count(*) FROM run WHERE label = 'sweep'")" 4 "runs stored with labels"
is "$(sql "$db" "SELECT count(*) FROM prediction")" 4 "with their predictions"
is "$(sql "$db" "SELECT group_concat(infer_gpus) FROM run WHERE label = 'sweep'")" \
    "8,8,16,16" "the overrides took effect"
is "$(grep -c '^model params 30532122624$' "$tmp/out")" 1 "refit.model gives the count"

"$REFIT" run "$SRCDIR/t/data/study/bad.lua" --db "$db" >/dev/null 2>"$tmp/err"
ok "$(test $? -ne 0; echo $?)" "a bad study exits non-zero"
is "$(cat "$tmp/err")" \
    "refit: $SRCDIR/t/data/study/bad.lua:4: infer.gpus: 16 is not a multiple of tp*pp*dp = 3" \
    "its error names the study line and the field"
is "$(sql "$db" "SELECT count(*) FROM run")" 5 "and nothing more is stored"
done_testing
