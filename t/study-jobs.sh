#!/bin/sh
# `refit run --jobs N` (sim/cmd_run_dist.c): the same output and the same rows as a serial
# run, whatever the study does with its results; points computed by the jobs are taken in
# study order, the rest computed by the replay; errors as a serial run reports them.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/study

# dump DB: every table's rows in key order, without what is measured rather than predicted
# (when a run was stored, how long planning and simulating took) and SQLite's statistics.
dump() {
    for t in $(sql "$1" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE
            'sqlite_%' ORDER BY name"); do
        cols=$(sql "$1" "SELECT group_concat('\"' || name || '\"', ', ') FROM
            pragma_table_info('$t') WHERE NOT ('$t' = 'run' AND name IN ('created_at',
            'plan_seconds')) AND NOT ('$t' = 'prediction' AND name = 'sim_seconds') AND NOT
            ('$t' = 'study' AND name = 'started_at')")
        echo "== $t"
        sql "$1" "SELECT $cols FROM \"$t\" ORDER BY $cols"
    done
}

# same STUDY JOBS NAME: serial and --jobs runs print the same and store the same.
same() {
    "$REFIT" run "$data/$1" --db "$tmp/$3-1.db" >"$tmp/$3-1.out" 2>/dev/null
    ok $? "$3: the serial run succeeds"
    "$REFIT" run "$data/$1" --db "$tmp/$3-n.db" --jobs "$2" >"$tmp/$3-n.out" 2>"$tmp/$3-n.err"
    ok $? "$3: --jobs $2 succeeds"
    ok "$(cmp -s "$tmp/$3-1.out" "$tmp/$3-n.out"; echo $?)" "$3: it prints what the serial run prints"
    dump "$tmp/$3-1.db" >"$tmp/$3-1.dump"
    dump "$tmp/$3-n.db" >"$tmp/$3-n.dump"
    ok "$(test -s "$tmp/$3-1.dump" && cmp -s "$tmp/$3-1.dump" "$tmp/$3-n.dump"; echo $?)" \
        "$3: and stores the same rows"
}

same sweep.lua 3 sweep
is "$(cat "$tmp/sweep-n.err")" \
    "refit run: 3 jobs computed 5 points; the replay took 5, computed 0" \
    "sweep: every point computed by the jobs"
is "$(sql "$tmp/sweep-n.db" "SELECT group_concat(id) FROM run")" "1,2,3,4,5" \
    "sweep: run ids in study order"

same depends.lua 2 depends
is "$(cat "$tmp/depends-n.err")" \
    "refit run: 2 jobs computed 2 points; the replay took 2, computed 2" \
    "depends: the point chosen from a result, and the one after, computed by the replay"
is "$(sql "$tmp/depends-n.db" "SELECT group_concat(infer_gpus) FROM run")" "8,16,16,16" \
    "depends: each point keeps the table as it was at its call"

# A search stores its best layouts, and its result names them.
same search.lua 2 search

# Into a database that holds runs already: the results' run ids are the database's.
"$REFIT" run "$data/depends.lua" --db "$tmp/depends-1.db" >"$tmp/again-1.out" 2>/dev/null
"$REFIT" run "$data/depends.lua" --db "$tmp/depends-n.db" --jobs 2 >"$tmp/again-n.out" 2>/dev/null
is "$(grep '^first' "$tmp/again-n.out")" "$(grep '^first' "$tmp/again-1.out")" \
    "a second run: the run id in a result as the serial run has it"
is "$(grep -c '^first: 8 GPUs, .* 5 runs so far$' "$tmp/again-n.out")" 1 "the database's next"
is "$(sql "$tmp/depends-n.db" "SELECT group_concat(id) FROM run")" "1,2,3,4,5,6,7,8" \
    "its runs after the database's"

# A study that fails: the same error, at the study's line, after the same runs.
mkdir "$tmp/shards"
TMPDIR=$tmp/shards "$REFIT" run "$data/bad.lua" --db "$tmp/bad.db" --jobs 2 >/dev/null 2>"$tmp/err"
ok "$(test $? -ne 0; echo $?)" "bad: --jobs exits non-zero"
is "$(grep -v '^refit run: ' "$tmp/err")" \
    "refit: $data/bad.lua:4: infer.gpus: 16 is not a multiple of tp*pp*dp = 3" \
    "bad: the error names the study line and the field"
ok "$(test ! -e "$tmp/bad.db"; echo $?)" "bad: nothing stored, no database"
ok "$(rmdir "$tmp/shards"; echo $?)" "bad: no shard directory is left behind"

# Cut short by a signal (a scheduler's SIGTERM; Ctrl-C's SIGINT is handled alike, but a
# background job of a script ignores it): the jobs are stopped, the shards removed, and
# refit dies of the signal. The signal is sent once the shards' folder exists, while the
# jobs compute their first points (seconds each).
mkdir "$tmp/cut"
TMPDIR=$tmp/cut "$REFIT" run "$data/cut.lua" --db "$tmp/cut.db" --jobs 2 >/dev/null 2>&1 &
pid=$!
# shellcheck disable=SC2317 # called through wait_until
has_shards() { [ -n "$(ls -A "$tmp/cut")" ]; }
wait_until has_shards
ok $? "cut: the shards' folder is made"
kill -TERM "$pid"
wait "$pid"
is "$?" 143 "cut: refit dies of the SIGTERM"
is "$(ls -A "$tmp/cut")" "" "cut: no shard is left behind"
alive=$(for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$f" 2>/dev/null; echo; done |
    grep -c "[-]-db $tmp/cut.db") # the bracket keeps grep from finding itself
is "$alive" 0 "cut: no job outlives it"
is "$(sql "$tmp/cut.db" "SELECT count(*) FROM run" 2>/dev/null || echo 0)" 0 \
    "cut: the database holds no run of the study (the replay had not begun)"

# Under MPI (mpirun -np 3 refit run): the same, the shards sent to rank 0 over MPI.
: "${REFIT_EXEC:=./exec/refit-exec}" "${MPIRUN:=mpirun}"
if [ -x "$REFIT_EXEC" ] && command -v "$MPIRUN" >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    over=
    if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then over=--oversubscribe; fi
    for s in sweep depends; do
        # shellcheck disable=SC2086 # over is empty or one word
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$MPIRUN" $over -np 3 \
            "$REFIT" run "$data/$s.lua" --db "$tmp/$s-mpi.db" >"$tmp/$s-mpi.out" 2>"$tmp/$s-mpi.err"
        ok $? "$s: mpirun -np 3 refit run succeeds"
        ok "$(cmp -s "$tmp/$s-1.out" "$tmp/$s-mpi.out"; echo $?)" "$s: rank 0 prints what a serial run prints"
        dump "$tmp/$s-mpi.db" >"$tmp/$s-mpi.dump"
        ok "$(cmp -s "$tmp/$s-1.dump" "$tmp/$s-mpi.dump"; echo $?)" "$s: and stores the same rows"
    done
    is "$(grep '^refit run: ' "$tmp/sweep-mpi.err")" \
        "refit run: 3 ranks computed 5 points; the replay took 5, computed 0" \
        "sweep: every point computed by a rank"
else
    for _ in 1 2 3 4 5 6 7; do echo "ok $((n + 1)) # SKIP needs MPI"; n=$((n + 1)); done
fi

"$REFIT" run "$data/sweep.lua" --db "$tmp/x.db" --jobs 0 >/dev/null 2>"$tmp/err"
is "$?" 2 "--jobs 0 is a usage error"
is "$(head -1 "$tmp/err")" \
    "refit: --jobs: expected a count of processes from 1 to 1024, got '0' (see refit run --help)" \
    "saying why"
done_testing
