#!/bin/sh
# Predictions on the shipped scenarios, to the last digit: every refactoring of the planner,
# scheduler, simulator or store must leave them as they are. t/data/predictions/golden.txt
# holds `scenario strategy predicted_s lower_bound_s payload_bytes` as refit printed them
# (%.17g); a change that means to move a figure rewrites that file and says why in its
# commit (REFIT_GOLDEN_WRITE=1 t/predictions.sh prints the new file).
. "${SRCDIR:-.}/t/lib.sh"
golden=$SRCDIR/t/data/predictions/golden.txt
db=$tmp/golden.db
while read -r scenario strategy want_s want_b want_p; do
    "$REFIT" sim "$SRCDIR/scripts/$scenario.lua" --strategy "$strategy" --db "$db" --json \
        >"$tmp/p.json" 2>"$tmp/err"
    got=$("$SQLITE3" :memory: "SELECT printf('%!.17g %!.17g %d',
        json_extract(readfile('$tmp/p.json'), '\$.predicted_s'),
        json_extract(readfile('$tmp/p.json'), '\$.lower_bound_s'),
        json_extract(readfile('$tmp/p.json'), '\$.payload_bytes'))")
    if [ -n "${REFIT_GOLDEN_WRITE:-}" ]; then
        echo "$scenario $strategy $got" >&2
    fi
    is "$got" "$want_s $want_b $want_p" "$scenario --strategy $strategy: the same prediction"
done <"$golden"
done_testing
