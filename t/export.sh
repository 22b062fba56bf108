#!/bin/sh
# End to end: `refit export --csv` writes a table or view of the store as RFC 4180 CSV that
# reads back (sqlite3's .import) as the very rows stored, optionally only some runs, and
# refuses an unknown name (listing the choices), --run on a table without run_id, an unknown
# run and an output that is the database, writing nothing.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/export.db
data=$SRCDIR/t/data/describe
# A label with everything CSV must quote: a comma, quotes and a line break.
label='comma, "quoted"
second line'

"$REFIT" sim "$data/plain.lua" --db "$db" --label "$label" >/dev/null
ok $? "refit sim plain.lua with a label that needs quoting (run 1)"
"$REFIT" sim "$data/over.lua" --db "$db" >/dev/null
ok $? "refit sim over.lua, no label (run 2)"

# A view, whole, to stdout: the header is the view's columns, a record per run, CRLF ends.
"$REFIT" export --csv run_memory --db "$db" >"$tmp/mem.csv"
ok $? "export the view run_memory"
is "$(head -n 1 "$tmp/mem.csv")" "$(printf 'run_id,label,model,train_layout,infer_layout,train_memory_bytes,train_budget_bytes,infer_memory_bytes,infer_budget_bytes,infer_kv_headroom_bytes,memory_overcommitted\r')" \
    "the header row names the view's columns, ends in CRLF"
is "$(sed -n 2,3p "$tmp/mem.csv")" "$(printf '1,"comma, ""quoted""\nsecond line",tiny-llama,tp2 cp1 pp1 dp4 ep1 etp1,tp4 pp1 dp1 ep1 x2 replicas,%s\r' \
    "$(sql "$db" "SELECT train_memory_bytes || ',' || train_budget_bytes || ',' ||
                  infer_memory_bytes || ',' || infer_budget_bytes || ',' ||
                  infer_kv_headroom_bytes || ',' || memory_overcommitted FROM run_memory
                  WHERE run_id = 1")")" \
    "the label is quoted, its quotes doubled, its line break kept inside the field"
is "$(sed -n 4p "$tmp/mem.csv" | cut -d, -f1-3)" "2,,tiny-llama" "a NULL label is an empty field"
is "$(tr -cd '\r' <"$tmp/mem.csv" | wc -c)" 3 "every record ends in CRLF, the break inside a field is LF"

# A table to a file, read back with sqlite3's CSV import into a table of the same columns:
# every column of every run equal to what is stored (reals exactly: plan_seconds has 17
# digits), a NULL read back as the empty text.
"$REFIT" export --csv run --db "$db" --out "$tmp/run.csv" >"$tmp/out.txt"
ok $? "export the table run with --out"
is "$(wc -c <"$tmp/out.txt")" 0 "--out: nothing on stdout"
cmp=$(sql "$db" "SELECT group_concat(format('(i.\"%w\" = o.\"%w\" OR (o.\"%w\" IS NULL AND
                 i.\"%w\" = ''''))', name, name, name, name), ' AND ') FROM pragma_table_info('run')")
got=$("$SQLITE3" "$tmp/back.db" "ATTACH '$db' AS o;
    CREATE TABLE run AS SELECT * FROM o.run WHERE 0;" ".import --csv --skip 1 $tmp/run.csv run" \
    "SELECT count(*), (SELECT count(*) FROM o.run) FROM run i JOIN o.run o ON o.id = i.id
     WHERE $cmp")
is "$got" "2|2" "the CSV of run reads back (sqlite3 .import) as every stored column of both runs"
is "$("$SQLITE3" "$tmp/back.db" "SELECT label FROM run WHERE id = 1")" "$label" \
    "the label with comma, quotes and line break round-trips"
"$REFIT" export --csv run --db "$db" | cmp -s - "$tmp/run.csv"
ok $? "--out holds what stdout gets"

# --run keeps the rows of the runs named, by run_id (the run table: id).
"$REFIT" export --csv link_load --db "$db" --run 2 >"$tmp/ll2.csv"
ok $? "export link_load --run 2"
is "$(tail -n +2 "$tmp/ll2.csv" | cut -d, -f1 | sort -u)" "2" "--run 2: only run 2's rows"
is "$(($(wc -l <"$tmp/ll2.csv") - 1))" "$(sql "$db" "SELECT count(*) FROM link_load WHERE run_id = 2")" \
    "--run 2: every link_load row of run 2"
is "$("$REFIT" export --csv link_load --db "$db" --run 1 --run 2 | tail -n +2 | wc -l)" \
    "$(sql "$db" "SELECT count(*) FROM link_load")" "--run 1 --run 2: both runs' rows"
is "$("$REFIT" export --csv run --db "$db" --run 2 | tail -n +2 | cut -d, -f1)" "2" \
    "the run table is filtered by its id"
is "$("$REFIT" export --csv transfer_each --db "$db" --run 1 | tail -n +2 | wc -l)" \
    "$(sql "$db" "SELECT count(*) FROM transfer_each WHERE run_id = 1")" \
    "a view filtered by run: transfer_each --run 1"

# Refusals, each naming the file and what to do, with nothing written.
err=$("$REFIT" export --csv 'run; DROP TABLE run' --db "$db" 2>&1 >/dev/null)
is "$?|$err" "1|refit: $db: no table or view 'run; DROP TABLE run'; tables: box, collective, gpu_traffic, link_load, measured_phase, measured_round, measurement, memory, ordinal, predicted_phase, predicted_round, predicted_step_phase, prediction, role_summary, round, run, side, study, study_table, tensor, transfer; views: measured_run, predicted_vs_measured, predicted_vs_measured_phase, predicted_vs_measured_round, run_memory, run_phases, transfer_each" \
    "an unknown name is refused, naming the tables and views"
is "$(sql "$db" "SELECT count(*) FROM run")" 2 "the name was never run as SQL"
err=$("$REFIT" export --csv measured_round --db "$db" --run 1 2>&1 >/dev/null)
is "$?|$err" "1|refit: $db: --run: table 'measured_round' has no run_id column; export it whole" \
    "--run on a table without run_id is refused"
err=$("$REFIT" export --csv link_load --db "$db" --run 7 --out "$tmp/none.csv" 2>&1 >/dev/null)
is "$?|$err" "1|refit: $db: --run 7: no such run" "an unknown run is refused"
test ! -e "$tmp/none.csv"
ok $? "a refused export writes no --out file"
err=$("$REFIT" export --csv run --db "$db" --out "$db-wal" 2>&1 >/dev/null)
is "$?|$err" "1|refit: $db-wal: is the database $db's WAL, shared memory or journal; name another output" \
    "--out the database's WAL is refused"
err=$("$REFIT" export run --db "$db" 2>&1 >/dev/null)
is "$?|$err" "2|refit: export needs a format: --csv (see refit export --help)" "no format is refused"
err=$("$REFIT" export --csv --db "$db" 2>&1 >/dev/null)
is "$?|$err" "2|refit: export takes one TABLE, got 0 (see refit export --help)" "no TABLE is refused"
err=$("$REFIT" export --csv run --db "$tmp/typo.db" 2>&1 >/dev/null)
is "$?" 1 "a missing database is refused"
test ! -e "$tmp/typo.db"
ok $? "... and not created"
done_testing
