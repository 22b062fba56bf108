#!/bin/sh
# End to end: `refit rm` removes runs, by id or by label, with every row of theirs in every
# table (measurements and their rounds too), in one transaction: a run that does not exist
# or a label no run has removes nothing. Other runs keep every row; the pages freed are
# reused by the next run stored.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/rm.db
data=$SRCDIR/t/data

"$REFIT" sim "$data/describe/plain.lua" --db "$db" --label keep >/dev/null
ok $? "run 1: plain.lua, label keep"
"$REFIT" sim "$data/framework/nemo-rl.lua" --db "$db" --label sweep >/dev/null
ok $? "run 2: a framework profile (step phases), label sweep"
"$REFIT" sim "$data/describe/over.lua" --db "$db" --label sweep >/dev/null
ok $? "run 3: over.lua, label sweep"
# Measurements as refit-exec writes them (t/store-t.c checks that writer), two rounds each.
sql "$db" "INSERT INTO measurement (id, run_id, backend, world_size, iters, warmup, seconds,
             status) VALUES (1, 1, 'mpi', 16, 5, 1, 0.002, 'ok'), (2, 2, 'mpi', 16, 5, 1, 0.003, 'ok');
           INSERT INTO measured_round VALUES (1, 0, 0.001), (1, 1, 0.001), (2, 0, 0.001),
             (2, 1, 0.002)"

# Rows of run $2 in every table that holds a run's rows, found from the schema itself (a
# table added later is counted without editing this test): "table rows" lines.
rows() {
    for t in $(sql "$1" "SELECT m.name FROM sqlite_schema m, pragma_table_info(m.name) c
                         WHERE m.type = 'table' AND c.name = 'run_id' ORDER BY m.name"); do
        echo "$t $(sql "$1" "SELECT count(*) FROM $t WHERE run_id = $2")"
    done
    echo "run $(sql "$1" "SELECT count(*) FROM run WHERE id = $2")"
    echo "measured_round $(sql "$1" "SELECT count(*) FROM measured_round WHERE measurement_id IN
                                    (SELECT id FROM measurement WHERE run_id = $2)")"
}
rows "$db" 1 >"$tmp/1.before"
rows "$db" 2 >"$tmp/2.before"
rows "$db" 3 >"$tmp/3.before"
is "$(grep -c ' 0$' "$tmp/2.before")" 0 "run 2 has rows in every table"

# A run that does not exist: refused, naming it, and nothing goes (run 2 named first).
"$REFIT" rm 2 99 --db "$db" >"$tmp/out" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $db: run 99 does not exist (nothing removed)" \
    "rm 2 99: the missing run is named"
is "$(cat "$tmp/out")" "" "and nothing is printed on stdout"
rows "$db" 2 >"$tmp/2.after"
cmp -s "$tmp/2.before" "$tmp/2.after"
ok $? "run 2 keeps every row"

"$REFIT" rm 2 2 --db "$db" >"$tmp/out"
ok $? "rm 2 2"
tensors=$(grep '^tensor ' "$tmp/2.before" | cut -d' ' -f2)
is "$(sed -n 1p "$tmp/out")" "removed 1 run from $db: 2" \
    "it says which run went, named twice and removed once"
is "$(sed -n 2p "$tmp/out" | tr ',' '\n' | grep -c .)" \
    "$(grep -vc ' 0$' "$tmp/2.before")" "and a count for each table it emptied"
case "$(sed -n 2p "$tmp/out")" in
*" tensor $tensors,"*" measured_round 2,"*|*" measured_round 2,"*" tensor $tensors,"*)
    ok 0 "tensor $tensors and measured_round 2 among them" ;;
*) ok 1 "tensor $tensors and measured_round 2 among them: $(sed -n 2p "$tmp/out")" ;;
esac
rows "$db" 2 >"$tmp/2.after"
is "$(grep -vc ' 0$' "$tmp/2.after")" 0 "run 2 has no row left in any table"
rows "$db" 1 >"$tmp/1.after"
rows "$db" 3 >"$tmp/3.after"
cmp -s "$tmp/1.before" "$tmp/1.after" && cmp -s "$tmp/3.before" "$tmp/3.after"
ok $? "runs 1 and 3 keep every row"
is "$(sql "$db" "PRAGMA foreign_key_check")" "" "no row references a removed one"

free=$(sql "$db" "PRAGMA freelist_count")
is "$(sed -n 3p "$tmp/out" | cut -d' ' -f1-3)" "free: $free pages" "it says the free pages"
"$REFIT" sim "$data/framework/nemo-rl.lua" --db "$db" --label again >/dev/null
is "$(sql "$db" "SELECT id FROM run WHERE label = 'again'")" 4 "a new run (ids are not reused)"
is "$(sql "$db" "SELECT $free > 0 AND freelist_count < $free FROM pragma_freelist_count")" 1 \
    "reuses the freed pages ($free before)"

# By label.
"$REFIT" rm --label nope --db "$db" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $db: no run has label \"nope\" (nothing removed)" \
    "a label no run has"
"$REFIT" rm --label sweep --db "$db" >"$tmp/out"
ok $? "rm --label sweep"
is "$(sed -n 1p "$tmp/out")" "removed 1 run from $db: 3" "removes the run left with that label"
is "$(sql "$db" "SELECT group_concat(id) FROM (SELECT id FROM run ORDER BY id)")" "1,4" "runs 1 and 4 remain"

# The command line.
"$REFIT" rm --db "$db" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "2 refit: rm takes one RUN or more, or --label L (see refit rm --help)" \
    "rm without runs"
"$REFIT" rm 1 --label keep --db "$db" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "2 refit: give runs or --label, not both (see refit rm --help)" \
    "runs and a label"
"$REFIT" rm x1 --db "$db" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" \
    "2 refit: RUN x1: expected a run id (a positive integer) (see refit rm --help)" "a bad id"
"$REFIT" rm 1 --db "$tmp/typo.db" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/typo.db: no such file" "a missing database"
test ! -e "$tmp/typo.db"
ok $? "is not created"
"$REFIT" rm --help | grep -q '^usage: refit rm RUN\.\.\. \[--db FILE\]$'
ok $? "rm --help"
done_testing
