#!/bin/sh
# End to end: how the commands open the database. refit report and refit calibrate only
# read it (no journal mode set, no -wal or -shm file, bytes and mtime unchanged) and work on
# a database in a read-only folder; a file that is not a refit database, or a place where
# none can be created, gets one line naming the file and nothing is written.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/store.db
scen=$SRCDIR/t/data/calib/llama-pair.lua

# fingerprint FILE: bytes and nanosecond mtime.
fingerprint() { echo "$(cksum <"$1") $(stat -c %y "$1")"; }

"$REFIT" sim "$scen" --db "$db" --json >"$tmp/sim.json"
ok $? "refit sim predicts a run on localhost"
id=$(json "$tmp/sim.json" '$.run_id')
# A measurement, as refit-exec would store it, so that calibrate has something to fit.
sql "$db" "INSERT INTO measurement (run_id, backend, world_size, iters, warmup, seconds,
           seconds_min, seconds_max, status) SELECT run_id, 'mpi', 2, 1, 0, seconds * 1.5,
           seconds * 1.5, seconds * 1.5, 'ok' FROM prediction WHERE run_id = $id;
           PRAGMA journal_mode = DELETE;" >/dev/null
is "$(sql "$db" "PRAGMA journal_mode")" delete "the database is in rollback-journal mode"
before=$(fingerprint "$db")

have_gnuplot=0
command -v "${REFIT_GNUPLOT:-gnuplot}" >/dev/null 2>&1 && have_gnuplot=1
if [ $have_gnuplot -eq 1 ]; then
    "$REFIT" report --db "$db" --html "$tmp/page.html" >/dev/null 2>"$tmp/err"
    ok $? "refit report reads it"
else
    n=$((n + 1))
    echo "ok $n # SKIP gnuplot is not installed (Debian package gnuplot-nox)"
fi
"$REFIT" calibrate --db "$db" --cluster localhost --out "$tmp/cal.lua" >/dev/null 2>"$tmp/err"
ok $? "refit calibrate reads it"
[ -s "$tmp/err" ] && sed 's/^/# /' "$tmp/err"
ok "$(test ! -e "$db-wal" && test ! -e "$db-shm" && test ! -e "$db-journal"; echo $?)" \
    "neither creates a -wal, -shm or -journal file"
is "$(fingerprint "$db")" "$before" "and the file's bytes and mtime are unchanged"
is "$(sql "$db" "PRAGMA journal_mode")" delete "its journal mode is still DELETE"

# A database whose schema needs a migration is not migrated by a reader.
cp "$db" "$tmp/old.db"
sql "$tmp/old.db" "PRAGMA user_version = 3"
"$REFIT" calibrate --db "$tmp/old.db" --cluster localhost --out "$tmp/cal.lua" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/old.db: schema version 3 is older than this refit (16): \
run refit plan/sim on it once to upgrade, or open it writable" "an old schema: readers say how to upgrade"
is "$(sql "$tmp/old.db" "PRAGMA user_version")" 3 "and leave it as it is"

# A text file given as the database: one line naming it, the file untouched.
printf 'run,seconds\n1,2.5\n' >"$tmp/notes.db"
before=$(fingerprint "$tmp/notes.db")
"$REFIT" plan "$scen" --db "$tmp/notes.db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/notes.db: not a refit database (file is not a database)" \
    "refit plan on a text file: a clear error"
"$REFIT" calibrate --db "$tmp/notes.db" --cluster localhost 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/notes.db: not a refit database (file is not a database)" \
    "refit calibrate on a text file: the same"
is "$(fingerprint "$tmp/notes.db")" "$before" "and the text file is untouched"
# Someone else's SQLite file is never migrated into.
sql "$tmp/other.db" "CREATE TABLE run (id, note)"
"$REFIT" plan "$scen" --db "$tmp/other.db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/other.db: has tables but is not a refit database" \
    "refit plan on another program's database is refused"
is "$(sql "$tmp/other.db" "SELECT count(*) FROM sqlite_schema")" 1 "and nothing is added to it"

# Where no database can be created, the error says which folder and why.
"$REFIT" plan "$scen" --db "$tmp/notes.db/x.db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/notes.db/x.db: cannot create it: $tmp/notes.db: Not a \
directory" "a database under a file: cannot create it, and why"

# A damaged file: bytes overwritten inside a b-tree page are often read without an error
# (a lookup misses a run, an export loses rows), so every command runs SQLite's quick_check
# at open and refuses the file, naming it, before reading or writing anything.
cp "$db" "$tmp/damaged.db"
"$REFIT" plan "$scen" --db "$tmp/damaged.db" >/dev/null
pages=$(sql "$tmp/damaged.db" "PRAGMA page_count")
head -c 300 /dev/zero | tr '\0' '\377' |
    dd of="$tmp/damaged.db" bs=1 seek=$(((pages - 2) * 4096 + 8)) conv=notrunc 2>/dev/null
before=$(fingerprint "$tmp/damaged.db")
for cmd in "show 1" "sim $scen" "rm 1" "export run --csv" "report --html $tmp/r.html" \
    "calibrate --cluster localhost"; do
    # shellcheck disable=SC2086 # the command's words
    "$REFIT" $cmd --db "$tmp/damaged.db" >/dev/null 2>"$tmp/err"
    rc=$?
    case "$rc $(cat "$tmp/err")" in
    "1 refit: $tmp/damaged.db: the database is damaged (SQLite's quick_check: "*"); refit \
neither reads nor writes it: recover what is left with \`sqlite3 $tmp/damaged.db .recover\`")
        ok 0 "refit ${cmd%% *} refuses a damaged database, naming it" ;;
    *) ok 1 "refit ${cmd%% *} refuses a damaged database, naming it: $rc $(cat "$tmp/err")" ;;
    esac
done
is "$(fingerprint "$tmp/damaged.db")" "$before" "and none of them changed its bytes or mtime"

# A device is no database: SQLite would open /dev/null, fail at the first write and leave a
# world-writable /dev/null-journal.
journal=absent
test -e /dev/null-journal && journal=present
ln -s /dev/null "$tmp/null.db"
for f in /dev/null "$tmp/null.db"; do
    "$REFIT" plan "$scen" --db "$f" >/dev/null 2>"$tmp/err"
    is "$? $(cat "$tmp/err")" "1 refit: $f: is not a regular file, not a refit database" \
        "--db $f is refused"
done
test "$journal" = present || test ! -e /dev/null-journal
ok $? "and no /dev/null-journal is made"

# A read-only folder. Tests run as root, for whom permissions do not bite, so the commands
# run as nobody (setpriv) there; as another user the folder's mode is enough.
ro=$tmp/ro
mkdir "$ro" "$tmp/out"
cp "$db" "$ro/wal.db"
sql "$ro/wal.db" "PRAGMA journal_mode = WAL" >/dev/null
chmod 0755 "$tmp"
chmod 0777 "$tmp/out"
chmod 0644 "$ro/wal.db"
chmod 0555 "$ro"
as=
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
    setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
    as="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
# nobody may not reach the build or the source tree (a clone in a 0700 folder, as mktemp
# makes): it runs copies of the program, the models and the scenario from $tmp.
nb=$tmp/nobody
mkdir -p "$nb/calib"
cp "$REFIT" "$nb/refit"
cp -R "$REFIT_MODELS" "$nb/models"
cp "$scen" "$nb/calib/"
cp -R "$SRCDIR/t/data/exec" "$nb/exec"
chmod -R a+rX "$nb"
nbscen=$nb/calib/$(basename "$scen")
if [ "$(id -u)" -eq 0 ] && [ -z "$as" ]; then
    for _ in 1 2 3 4; do
        n=$((n + 1))
        echo "ok $n # SKIP running as root without setpriv: a read-only folder cannot be tested"
    done
else
    # WAL mode with no -wal file and no way to create the -shm file: read as immutable.
    $as env REFIT_MODELS="$nb/models" "$nb/refit" calibrate --db "$ro/wal.db" \
        --cluster localhost --out "$tmp/out/cal.lua" \
        >/dev/null 2>"$tmp/err"
    ok $? "refit calibrate reads a WAL database in a read-only folder"
    [ -s "$tmp/err" ] && sed 's/^/# /' "$tmp/err"
    ok "$(test ! -e "$ro/wal.db-wal" && test ! -e "$ro/wal.db-shm"; echo $?)" \
        "and creates nothing there"
    $as env REFIT_MODELS="$nb/models" "$nb/refit" plan "$nbscen" --db "$ro/wal.db" >/dev/null 2>"$tmp/err"
    is "$? $(cat "$tmp/err")" "1 refit: $ro/wal.db: cannot write it (attempt to write a readonly \
database): the file or its folder is read-only" "refit plan into it: cannot write it, and why"
    $as env REFIT_MODELS="$nb/models" "$nb/refit" plan "$nbscen" --db "$ro/new.db" >/dev/null 2>"$tmp/err"
    is "$? $(cat "$tmp/err")" "1 refit: $ro/new.db: cannot create it: $ro: Permission denied" \
        "refit plan of a new database there: cannot create it, and why"
fi
chmod 0755 "$ro"

# link_load keeps only the links that carried bytes: a 2-GPU plan on a cluster of 100000
# nodes (4.8 M links) stores a handful of rows.
sed -e 's/system = "localhost"/system = "dgx-h100", nodes = 100000/' \
    -e "s|\"../exec/|\"$SRCDIR/t/data/exec/|" "$scen" >"$tmp/wide.lua"
"$REFIT" sim "$tmp/wide.lua" --db "$tmp/wide.db" --json >"$tmp/wide.json" 2>"$tmp/err"
ok $? "refit sim of a 2-GPU plan on 100000 nodes"
[ -s "$tmp/err" ] && sed 's/^/# /' "$tmp/err"
rows=$(sql "$tmp/wide.db" "SELECT count(*) FROM link_load")
ok "$(test "$rows" -ge 1 && test "$rows" -le 16; echo $?)" "stores $rows link_load rows"
is "$(sql "$tmp/wide.db" "SELECT count(*) FROM link_load WHERE bytes = 0 AND busy_seconds = 0")" \
    0 "none of them idle"
# --store summary: the run, its description, sides, memory and prediction with every link
# load, predicted round and phase, the same figures as a full run of the same scenario, and
# no tensor, box, transfer, collective or round row.
sdb=$tmp/summary.db
plain=$SRCDIR/t/data/describe/plain.lua
"$REFIT" sim "$plain" --db "$sdb" --store summary >/dev/null
ok $? "refit sim --store summary (run 1)"
"$REFIT" sim "$plain" --db "$sdb" >/dev/null
ok $? "and the same scenario stored full (run 2)"
is "$(sql "$sdb" "SELECT group_concat(stored) FROM (SELECT stored FROM run ORDER BY id)")" \
    "summary,full" "run.stored says which"
for t in tensor box transfer round; do
    is "$(sql "$sdb" "SELECT count(*) = 0, (SELECT count(*) > 0 FROM $t WHERE run_id = 2)
                      FROM $t WHERE run_id = 1")" "1|1" "the summary has no $t rows (the full run has)"
done
for t in side memory role_summary link_load predicted_round predicted_phase prediction; do
    is "$(sql "$sdb" "SELECT (SELECT count(*) FROM $t WHERE run_id = 1) ||
                             ' ' || (SELECT count(*) FROM $t WHERE run_id = 2)" | \
          awk '{ print ($1 == $2 && $1 > 0) }')" 1 "the summary keeps every $t row"
done
is "$(sql "$sdb" "SELECT count(DISTINCT seconds || bottleneck) FROM prediction")" 1 \
    "with the same prediction"
is "$(sql "$sdb" "SELECT count(*) FROM run a JOIN run b ON a.id = 1 AND b.id = 2 AND
                  a.scenario_json = b.scenario_json AND a.transfers = b.transfers AND
                  a.payload_bytes = b.payload_bytes")" 1 "and the same description and figures"
"$REFIT" show 1 --db "$sdb" >"$tmp/show.txt"
is "$(grep '^  stored' "$tmp/show.txt")" "  stored     summary: no tensors, boxes or transfers; \
refit-exec cannot replay it (refit sim $plain --store full stores them)" "refit show says so"
"$REFIT" show 2 --db "$sdb" >"$tmp/show.txt"
is "$(grep -c '^  stored' "$tmp/show.txt")" 0 "and says nothing of a full run"
"$REFIT" show 1 --db "$sdb" --json >"$tmp/out.json"
is "$(json "$tmp/out.json" '$.stored')" summary "show --json: stored"
"$REFIT" sim "$plain" --db "$sdb" --store some 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "2 refit: --store some: expected full or summary (see refit sim --help)" \
    "a bad --store"
# A study and a search store every run as a summary with --store summary: same runs and
# predictions as a full store, no plan rows.
"$REFIT" run "$SRCDIR/t/data/study/sweep.lua" --db "$tmp/study-full.db" >/dev/null 2>&1
"$REFIT" run "$SRCDIR/t/data/study/sweep.lua" --db "$tmp/study-sum.db" --store summary \
    >/dev/null 2>&1
ok $? "refit run sweep.lua --store summary"
q="SELECT count(*), sum(stored = 'summary'), (SELECT count(*) FROM prediction),
          (SELECT count(*) FROM link_load), (SELECT count(*) FROM transfer) FROM run"
full=$(sql "$tmp/study-full.db" "$q")
is "$(sql "$tmp/study-sum.db" "$q")" "$(echo "$full" | awk -F'|' '{ print $1 "|" $1 "|" $3 "|" $4 "|0" }')" \
    "every run a summary, with the full store's predictions and link loads ($full)"
"$REFIT" search "$SRCDIR/t/data/search/qwen3-30b.lua" --top 2 --store summary \
    --db "$tmp/search-sum.db" >/dev/null
ok $? "refit search --top 2 --store summary"
is "$(sql "$tmp/search-sum.db" "SELECT count(*), sum(stored = 'summary'),
                                (SELECT count(*) FROM prediction), (SELECT count(*) FROM tensor)
                                FROM run")" "2|2|2|0" "stores its 2 runs as summaries"

# Schema 12 rebuilds predicted_step_phase for the colocated phases (prepare, resume): a
# schema-11 file keeps its step rows, its view reads them, and it then stores a colocated step.
"$SQLITE3" "$tmp/v11.db" <"$SRCDIR/t/data/store/v11.sql"
before=$(sql "$tmp/v11.db" "SELECT group_concat(seq || phase || seconds || mechanism, ';')
                            FROM predicted_step_phase WHERE run_id = 2")
"$REFIT" sim "$SRCDIR/t/data/colocated/verl.lua" --db "$tmp/v11.db" >/dev/null 2>"$tmp/err"
ok $? "a schema-11 file with a step takes a colocated run"
is "$(sql "$tmp/v11.db" "PRAGMA user_version")" 16 "and is migrated to the current version (16)"
is "$(sql "$tmp/v11.db" "SELECT group_concat(seq || phase || seconds || mechanism, ';')
     FROM predicted_step_phase WHERE run_id = 2")" "$before" "its old step rows are kept as they were"
is "$(sql "$tmp/v11.db" "SELECT count(*), sum(phase IN ('prepare', 'resume')), count(DISTINCT
     framework) FROM run_phases")" "10|2|2" "run_phases reads both runs' phases"
is "$(sql "$tmp/v11.db" "PRAGMA integrity_check")" "ok" "the rebuilt file is intact"
done_testing
