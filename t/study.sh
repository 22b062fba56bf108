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
# The database is created by the first run a study stores: a study that fails before that
# leaves no file; the runs stored before a later failure stay.
"$REFIT" run "$SRCDIR/t/data/study/bad.lua" --db "$tmp/new.db" >"$tmp/out" 2>/dev/null
ok "$(test $? -ne 0 && test ! -e "$tmp/new.db" && test ! -e "$tmp/new.db-wal"; echo $?)" \
    "a study that stores nothing before failing leaves no database"
"$REFIT" run "$SRCDIR/t/data/study/badlabel.lua" --db "$tmp/label.db" >/dev/null 2>"$tmp/err"
ok "$(test $? -ne 0; echo $?)" "a study label that is not UTF-8 is an error"
is "$(cat "$tmp/err")" \
    "refit: $SRCDIR/t/data/study/badlabel.lua:5: label: not valid UTF-8 (a label is stored as text)" \
    "naming the study line and the field"
# A study in a folder whose path is longer than Lua's 60-byte short names: the error still
# names the whole path, one a user can open.
long=$tmp/a-folder-whose-name-is-long-enough-that-lua-would-cut-it
mkdir -p "$long"
printf 'local base = refit.scenario("%s")\nrefit.plan(base, { label = "bad \\xff" })\n' \
    "$SRCDIR/t/data/sim/qwen3-30b.lua" >"$long/study.lua"
"$REFIT" run "$long/study.lua" --db "$tmp/long.db" >/dev/null 2>"$tmp/err"
is "$(cat "$tmp/err")" \
    "refit: $long/study.lua:2: label: not valid UTF-8 (a label is stored as text)" \
    "a study's error names its whole path, however long"
is "$(sql "$tmp/label.db" "SELECT group_concat(label) FROM run")" "first" \
    "the run stored before it stays, the bad one is not stored"
done_testing
