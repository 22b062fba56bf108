#!/bin/sh
# End to end: `refit plan` on scaled-down scenarios (t/data/exec), then `refit-exec --backend
# mpi --check` replays each under mpirun on 2 to 8 ranks: every inference byte verified,
# the measurement stored. Injected faults (crash, hang, corrupt) end the job with an error
# on every rank and a failed row; a plan too big for the world is refused. refit-exec --probe
# times each rank's device (host memory here) and prints what scripts/gpu-check reads.
. "${SRCDIR:-.}/t/lib.sh"
: "${REFIT_EXEC:=./exec/refit-exec}"
: "${MPIRUN:=mpirun}"
db=$tmp/exec.db
data=$SRCDIR/t/data/exec

if [ ! -x "$REFIT_EXEC" ] || ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "1..0 # SKIP refit-exec needs MPI (configure found none) and $MPIRUN"
    exit 0
fi
# OpenMPI refuses root and more ranks than cores unless told; CI runs as root on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
over=
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then over=--oversubscribe; fi
# Under AddressSanitizer, OpenMPI 4.1's own allocations from MPI_Init are never freed and
# LeakSanitizer would fail every run: leak detection alone is off for refit-exec under
# mpirun (ASan and UBSan stay on). One case below checks refit-exec's own frames for leaks.
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS

# run NP ARGS...: refit-exec on NP ranks; stdout in $tmp/out, stderr in $tmp/err, status in $rc.
run() {
    np=$1
    shift
    "$MPIRUN" $over -np "$np" "$REFIT_EXEC" --db "$db" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
plan() { # plan SCENARIO STRATEGY: prints the new run's id
    "$REFIT" plan "$data/$1.lua" --db "$db" --strategy "$2" --json >"$tmp/plan.json" &&
        json "$tmp/plan.json" '$.run_id'
}
every_rank_says() { # every_rank_says NP: each rank wrote a line of its own to stderr
    k=0
    while [ "$k" -lt "$1" ]; do
        grep -q "^refit-exec: rank $k: " "$tmp/err" || return 1
        k=$((k + 1))
    done
}
last_measurement() { sql "$db" "SELECT $1 FROM measurement ORDER BY id DESC LIMIT 1"; }

# Every scenario, every strategy: all bytes arrive, and every strategy verifies exactly the
# bytes that reshard delivers (each inference shard once). Hierarchical plans relay: a
# domain's leader forwards what it received, in the same round (pipelined) or a later one.
for case in dsv3-disjoint:8 dsv3-fp8-colocated:4 qwen3-moe-dp:8 llama-pieces:4 llama-pair:2; do
    scen=${case%:*}
    np=${case#*:}
    shards=
    for strategy in reshard broadcast hybrid hierarchical; do
        id=$(plan "$scen" "$strategy")
        ok $? "$scen: refit plan --strategy $strategy"
        if [ "$strategy" = reshard ]; then
            shards=$(sql "$db" "SELECT sum(bytes * dst_count) FROM transfer
                                WHERE run_id = $id AND phase = 'deliver'")
        fi
        run "$np" --run "$id" --backend mpi --check --iters 2 --warmup 1 --json
        ok $rc "$scen $strategy: refit-exec on $np ranks succeeds"
        [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
        is "$(json "$tmp/out" '$.status') $(json "$tmp/out" '$.errors')" "ok 0" \
            "$scen $strategy: status ok, no wrong element"
        is "$(json "$tmp/out" '$.bytes_verified')" "$shards" \
            "$scen $strategy: verified every inference byte ($shards)"
        mid=$(json "$tmp/out" '$.measurement_id')
        is "$(sql "$db" "SELECT status, errors, bytes_verified, world_size, backend, iters,
                                seconds > 0 AND seconds_min <= seconds AND seconds <= seconds_max
                         FROM measurement WHERE id = $mid")" \
            "ok|0|$shards|$np|mpi|2|1" "$scen $strategy: measurement row stored"
        is "$(sql "$db" "SELECT count(*) FROM measured_round WHERE measurement_id = $mid")" \
            "$(sql "$db" "SELECT rounds FROM run WHERE id = $id")" \
            "$scen $strategy: one measured time per round"
        is "$(sql "$db" "SELECT count(*) FROM measured_run WHERE measurement_id = $mid")" 1 \
            "$scen $strategy: listed in measured_run"
    done
done

is "$(sql "$db" "SELECT count(*) > 0 FROM transfer t JOIN run r ON r.id = t.run_id
                 WHERE r.strategy = 'hierarchical' AND t.after_id IS NOT NULL")" 1 \
    "hierarchical plans relayed boxes (transfers with after_id)"
is "$(sql "$db" "SELECT group_concat(DISTINCT exec_config) FROM measured_run")" "mpi fill=host" \
    "every measurement says how it ran (exec_config, in measured_run)"
is "$(json "$tmp/out" '$.exec_config')" "mpi fill=host" "and --json says it too"

# Pipelined relays: a forward shares the round of what it forwards (hop = its feed's + 1) and
# sends each chunk a step after it landed. Clusters of small NVLink domains give long chains:
# the ring of 3 destination domains with NVLink fan-outs (relay-ring), a tree of leaders
# (relay-tree: a delivery forwarded to 2), FP8 boxes and scales (relay-fp8), and a chain of
# 6 leaders (relay-chunks: each delivery forwarded to 1) in 4 KiB chunks, whose rounds take
# hundreds of steps. Each plan is checked to forward at hop 2 or more, so no case passes
# without pipelining; each replay verifies every byte, as many as reshard delivers.
for case in relay-ring: relay-tree:2 relay-fp8: relay-chunks:1; do
    scen=${case%:*}
    fanout=${case#*:}
    shards=$(plan "$scen" reshard) &&
        shards=$(sql "$db" "SELECT sum(bytes * dst_count) FROM transfer
                            WHERE run_id = $shards AND phase = 'deliver'")
    id=$(plan "$scen" hierarchical)
    ok $? "$scen: refit plan --strategy hierarchical"
    # transfer_each gives each destination of a chain run its own hop (the run's + k).
    hops=$(sql "$db" "SELECT max(hop) FROM transfer_each WHERE run_id = $id")
    ok "$(test "$hops" -ge 2; echo $?)" "$scen: chains of forwards within a round ($hops hops deep)"
    if [ "$fanout" = 1 ]; then
        is "$(sql "$db" "SELECT count(*) > 0, max(dst_count) >= 2 FROM transfer
                         WHERE run_id = $id AND chain")" "1|1" \
            "$scen: leaders evenly spaced relay as chain runs (one record per chain)"
    fi
    if [ -n "$fanout" ]; then
        is "$(sql "$db" "SELECT max(n) FROM (SELECT count(*) n FROM transfer WHERE run_id = $id
                                             AND after_id IS NOT NULL GROUP BY after_id)")" \
            "$fanout" "$scen: at most $fanout forwards of one delivery"
    fi
    run 8 --run "$id" --backend mpi --check --iters 2 --warmup 1 --json
    ok $rc "$scen: refit-exec replays the pipelined rounds on 8 ranks"
    [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
    is "$(json "$tmp/out" '$.status') $(json "$tmp/out" '$.errors') \
$(json "$tmp/out" '$.bytes_verified')" "ok 0 $shards" \
        "$scen: every inference byte verified ($shards), none wrong"
done
is "$(sql "$db" "SELECT chunk_bytes, max(bytes) / chunk_bytes FROM run r
                 JOIN transfer t ON t.run_id = r.id WHERE r.id = $id")" "4096|128" \
    "relay-chunks: 4 KiB chunks, the largest box in 128 pieces"
# Engines placed domain by domain: moe-domains (2 domains of 6 GPUs, engines of 4 on GPUs
# 0-3 and 6-9, training on the idle pair 4-5) and moe-slots (2 domains of 5, engines of 2,
# two per domain on 0-1, 2-3, 5-6, 7-8, training on the idle GPU 4: the mesh's fifth axis).
# No plan delivers to an idle GPU, and each replay on the span's ranks verifies every byte
# reshard delivers, the planner's payload beside it (moe-slots: reshard and broadcast, the
# two ways a shard is found on the five-axis mesh, to keep the test short).
for case in moe-domains:10:0,1,2,3,6,7,8,9 moe-slots:9:0,1,2,3,5,6,7,8; do
    scen=${case%%:*}
    engines=${case##*:}
    np=${case#*:}
    np=${np%%:*}
    shards=
    strategies="reshard broadcast hybrid hierarchical"
    [ "$scen" = moe-slots ] && strategies="reshard broadcast"
    for strategy in $strategies; do
        id=$(plan "$scen" "$strategy")
        ok $? "$scen: refit plan --strategy $strategy"
        [ "$strategy" = reshard ] &&
            shards=$(sql "$db" "SELECT sum(bytes * dst_count) FROM transfer
                                WHERE run_id = $id AND phase = 'deliver'")
        # Broadcast has no deliveries (its collectives are checked below).
        [ "$strategy" = broadcast ] ||
            is "$(sql "$db" "SELECT count(DISTINCT dst_gpu), count(*) FILTER (WHERE dst_gpu
                             NOT IN ($engines)) FROM transfer_each
                             WHERE run_id = $id AND phase = 'deliver'")" "8|0" \
                "$scen $strategy: deliveries land on the engines' 8 GPUs, none on an idle one"
        run "$np" --run "$id" --backend mpi --check --iters 1 --json
        ok $rc "$scen $strategy: refit-exec on $np ranks succeeds"
        [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
        is "$(json "$tmp/out" '$.status') $(json "$tmp/out" '$.errors') \
$(json "$tmp/out" '$.bytes_verified') $(json "$tmp/out" '$.world_size') \
$(json "$tmp/out" '$.payload_bytes')" \
            "ok 0 $shards $np $(sql "$db" "SELECT payload_bytes FROM run WHERE id = $id")" \
            "$scen $strategy: every inference byte verified ($shards), the plan's payload"
    done
done
is "$(sql "$db" "SELECT side, placement, domain_gpus, span, gpus FROM side WHERE run_id = $id
                 ORDER BY side")" "infer|domain|5|9|8
train|packed|0|1|1" "moe-slots: the store records the placement and the span"
id=$(plan moe-domains broadcast)
is "$(sql "$db" "SELECT DISTINCT root_gpu, first_gpu, gpu_count, gpu_stride FROM collective
                 WHERE run_id = $id")" "4|0|10|1" \
    "moe-domains broadcast: one collective per tensor from root 4 over GPUs 0-9, idle ones too"
is "$(sql "$db" "SELECT payload_bytes - 8 * model_bytes, moved_bytes - 9 * model_bytes -
                        (SELECT sum(bytes * dst_count) FROM transfer
                         WHERE run_id = $id AND src_gpu != dst_gpu)
                 FROM run WHERE id = $id")" "0|0" \
    "moe-domains broadcast: the model written into 8 GPUs, moved over 9 hops (and the gathers)"

id=$(plan qwen3-moe-dp auto)
ok $? "refit plan --strategy auto (strategies chosen by the simulator)"
run 8 --run "$id" --backend mpi --check --iters 1 --json
is "$rc $(json "$tmp/out" '$.status')" "0 ok" "an auto plan (mixed strategies) replays"

# Plan, predict, replay, compare: the localhost cluster preset models these MPI ranks.
"$REFIT" sim "$data/localhost-hybrid.lua" --db "$db" --json >"$tmp/sim.json"
ok $? "refit sim predicts the localhost run"
id=$(json "$tmp/sim.json" '$.run_id')
run 8 --run "$id" --backend mpi --check --iters 3
ok $rc "refit-exec measures it"
cmp=$(sql "$db" "SELECT round(predicted_seconds * 1e3, 3) || ' ms predicted, ' ||
                        round(measured_seconds * 1e3, 3) || ' ms measured'
                 FROM predicted_vs_measured WHERE run_id = $id")
ok "$(test -n "$cmp"; echo $?)" "prediction and measurement side by side: $cmp"
is "$(sql "$db" "SELECT count(*) FROM predicted_vs_measured_round WHERE run_id = $id")" \
    "$(sql "$db" "SELECT rounds FROM run WHERE id = $id")" "and round by round"

# More ranks than GPUs: the extra ranks take part in every collective step and idle.
id=$(plan llama-pair reshard)
run 3 --run "$id" --backend mpi --check --iters 1 --warmup 0
ok $rc "a world larger than the plan works"
ok "$(grep -q 'ranks 2 to 2 have nothing to do' "$tmp/err"; echo $?)" "and says so"

# Without --check the times are kept but the row is no measurement.
run 2 --run "$id" --backend mpi --iters 1 --warmup 0
ok $rc "without --check refit-exec succeeds"
is "$(last_measurement status)" unverified "without --check the row is unverified"
is "$(sql "$db" "SELECT count(*) FROM measured_run
                 WHERE measurement_id = (SELECT max(id) FROM measurement)")" 0 \
    "an unverified row is not in measured_run"

# A plan for more GPUs than the world: refused, nothing stored.
big=$(plan dsv3-disjoint reshard)
before=$(sql "$db" "SELECT count(*) FROM measurement")
run 2 --run "$big" --backend mpi --check
ok "$(test $rc -ne 0; echo $?)" "a plan for 8 GPUs on 2 ranks exits non-zero"
is "$(grep "^refit-exec" "$tmp/err")" "refit-exec: run $big needs 8 GPUs, this world has 2: plan a \
scaled-down scenario; the simulator predicts the large one" "with one line saying why"
is "$(sql "$db" "SELECT count(*) FROM measurement")" "$before" "and stores nothing"
run 2 --run 999 --backend mpi
is "$rc $(grep "^refit-exec" "$tmp/err")" "1 refit-exec: no run 999 in this database" "an unknown run is refused"
# A run stored as a summary has no plan to replay: refused, saying how to get one.
"$REFIT" sim "$SRCDIR/t/data/describe/plain.lua" --db "$db" --store summary >/dev/null
summary=$(sql "$db" "SELECT max(id) FROM run WHERE stored = 'summary'")
before=$(sql "$db" "SELECT count(*) FROM measurement")
run 2 --run "$summary" --backend mpi
is "$rc $(grep "^refit-exec" "$tmp/err")" "1 refit-exec: run $summary was stored as a summary (no \
plan): plan it again with refit sim $SRCDIR/t/data/describe/plain.lua --store full" \
    "a summary run is refused, saying how to plan it again"
is "$(sql "$db" "SELECT count(*) FROM measurement")" "$before" "and stores nothing"
# Figures the planner never stores (an edited database) are refused before the replay: a
# staging of 0 bytes once replayed 8 bytes at a time and was stored as measured.
cp "$db" "$tmp/edited.db"
sql "$tmp/edited.db" "UPDATE run SET staging_bytes = 0 WHERE id = $id"
"$MPIRUN" $over -np 2 "$REFIT_EXEC" --db "$tmp/edited.db" --run "$id" --backend mpi >"$tmp/out" \
    2>"$tmp/err"
is "$? $(grep "^refit-exec" "$tmp/err")" "1 refit-exec: run $id: stored staging 0 bytes, chunk \
$(sql "$db" "SELECT coalesce(chunk_bytes, 0) FROM run WHERE id = $id") bytes, \
$(sql "$db" "SELECT rounds FROM run WHERE id = $id") rounds: the planner stores at least 1 byte \
of staging and no negative figure (was the database edited?)" "a run stored with no staging is refused"
is "$(sql "$tmp/edited.db" "SELECT count(*) FROM measurement")" \
    "$(sql "$db" "SELECT count(*) FROM measurement")" "and nothing is measured"
# A mistyped --db is refused, naming it, and no empty database is left in its place.
"$MPIRUN" $over -np 2 "$REFIT_EXEC" --db "$tmp/typo.db" --run 1 --backend mpi >"$tmp/out" \
    2>"$tmp/err"
is "$? $(grep "^refit-exec" "$tmp/err")" "1 refit-exec: $tmp/typo.db: no such file" \
    "a database that does not exist is refused, naming it"
ok "$(test ! -e "$tmp/typo.db"; echo $?)" "and is not created"

# A replay that cannot fit is refused before anything is allocated: every rank's need is
# computed from the plan and compared with what the host has (MemAvailable), and the row
# says why. Llama 3 405B (812 GB in BF16) on 2 host ranks fits no CI machine.
cat >"$tmp/huge.lua" <<'EOF'
return { model = "llama3-405b", cluster = { system = "localhost" }, allow_overcommit = true,
         train = { gpus = 2, tp = 2 }, infer = { gpus = 2, tp = 2 }, strategy = "reshard" }
EOF
"$REFIT" plan "$tmp/huge.lua" --db "$db" --json >"$tmp/plan.json"
ok $? "refit plan llama3-405b onto 2 GPUs of localhost"
huge=$(json "$tmp/plan.json" '$.run_id')
start=$(date +%s)
run 2 --run "$huge" --backend mpi --check
took=$(($(date +%s) - start))
ok "$(test $rc -eq 1; echo $?)" "a replay that does not fit in memory exits 1"
need="rank 0 needs 811.7 GB (training shards 405.9, inference 405.9, staging 0.0), host "
ok "$(grep "^refit-exec: " "$tmp/err" | head -1 | grep -q -F "refit-exec: $need"; echo $?)" \
    "with the figures of the neediest rank"
ok "$(grep -q -E 'GB available for 2 ranks needing 1623\.4 GB: not replayed, nothing allocated$' \
    "$tmp/err"; echo $?)" "and of the host's ranks together"
[ $rc -eq 1 ] || sed 's/^/# /' "$tmp/err"
ok "$(test "$took" -le 120; echo $?)" "within seconds ($took s), allocating nothing"
is "$(last_measurement "status, run_id, error_text LIKE '$need%'")" "failed|$huge|1" \
    "the row is failed and says why"

# The final write waits for another process's lock, retrying for --db-timeout seconds.
# REFIT_EXEC_TEST_STORE_GATE (testing only) stops rank 0 just before it, so the lock is
# taken at exactly that point; no step below depends on how long anything takes.
wait_for() { # wait_for TEST...: until TEST succeeds (status 0), or 1 after 10 minutes
    i=0
    while ! "$@"; do
        [ $i -lt 6000 ] || return 1
        sleep 0.1
        i=$((i + 1))
    done
}
lock_db() { # takes the write lock on $db from another process, until unlock_db
    rm -f "$tmp/lock.fifo"
    mkfifo "$tmp/lock.fifo"
    "$SQLITE3" "$db" <"$tmp/lock.fifo" >/dev/null 2>&1 &
    lock_pid=$!
    exec 3>"$tmp/lock.fifo"
    # The holder says when it holds the lock. (Probing with a second BEGIN IMMEDIATE raced:
    # a probe that held the lock for an instant made the holder's own BEGIN fail, and the
    # test then waited 10 minutes for a lock nobody held.) Its busy timeout lets it wait
    # for a reader's brief lock.
    rm -f "$tmp/locked"
    printf '.bail on\n.timeout 60000\nBEGIN IMMEDIATE;\n.shell touch %s/locked\n' "$tmp" >&3
    # shellcheck disable=SC2016 # evaluated at each poll by wait_for
    wait_for eval 'test -e "$tmp/locked" || ! kill -0 $lock_pid 2>/dev/null'
    if [ ! -e "$tmp/locked" ]; then
        echo "Bail out! the lock holder could not take the lock on $db"
        exit 1
    fi
}
unlock_db() {
    echo "COMMIT;" >&3
    exec 3>&-
    wait "$lock_pid"
}
gated() { # gated NP ARGS...: refit-exec in the background, stopped before its final write
    rm -f "$tmp/gate.ready" "$tmp/gate.go"
    REFIT_EXEC_TEST_STORE_GATE=$tmp/gate "$MPIRUN" $over -np "$1" "$REFIT_EXEC" --db "$db" \
        --run "$2" --backend mpi --check --iters 2 --warmup 0 "$3" "$4" ${5:+"$5"} \
        >"$tmp/out" 2>"$tmp/err" &
    exec_pid=$!
    # Until rank 0 stands at the gate (or refit-exec ended without getting there).
    # shellcheck disable=SC2016 # evaluated at each poll by wait_for
    wait_for eval 'test -e "$tmp/gate.ready" || ! kill -0 $exec_pid 2>/dev/null'
    ok "$(test -e "$tmp/gate.ready"; echo $?)" "refit-exec stops before its final write"
}
id=$(plan llama-pair reshard)
rounds=$(sql "$db" "SELECT rounds FROM run WHERE id = $id")
gated 2 "$id" --db-timeout 120 --json
lock_db
touch "$tmp/gate.go"
# shellcheck disable=SC2016 # evaluated at each poll by wait_for
wait_for eval 'grep -q "is locked by another process" "$tmp/err" || ! kill -0 $exec_pid 2>/dev/null'
unlock_db
wait "$exec_pid"
rc=$?
is "$rc $(json "$tmp/out" '$.status') $(json "$tmp/out" '$.stored')" "0 ok 1" \
    "a lock released within --db-timeout: the measurement lands"
is "$(grep -c "^refit-exec: rank 0: $db is locked by another process; retrying for up to 120 s \
(--db-timeout)$" "$tmp/err")" 1 "and rank 0 says what it waits for"
is "$(last_measurement "status, id")" "ok|$(json "$tmp/out" '$.measurement_id')" "the row is ok"

gated 2 "$id" --db-timeout 2
lock_db
touch "$tmp/gate.go"
wait "$exec_pid"
rc=$?
unlock_db
mid=$(last_measurement id)
ok "$(test $rc -ne 0; echo $?)" "a lock held past --db-timeout: refit-exec exits non-zero"
grep -q "^refit-exec: rank 0: the result" "$tmp/err" || sed 's/^/# /' "$tmp/err"
is "$(grep "^refit-exec: rank 0: the result" "$tmp/err")" \
    "refit-exec: rank 0: the result was not stored: $db: database is locked (another refit is \
writing it; waited 2 s, --db-timeout); measurement $mid of run $id stays failed (\"did not \
finish\"); the result is on stdout as JSON" "and says why on stderr"
is "$(json "$tmp/out" '$.status') $(json "$tmp/out" '$.stored') $(json "$tmp/out" '$.errors') \
$("$SQLITE3" :memory: "SELECT json_array_length(readfile('$tmp/out'), '$.round_seconds')")" \
    "ok 0 0 $rounds" "the verified result is printed as JSON, every round"
is "$(last_measurement "status, error_text LIKE 'did not finish%', seconds IS NULL")" "failed|1|1" \
    "and the row stays failed"

# refit-exec --probe: microbenchmarks of each rank's device, here host memory (the MPI
# backend). scripts/gpu-check reads these keys: every rank has every probe, in order, each
# ok with its time and rate, or saying why it is unsupported; the fill and check went
# through host memory, as exec_config says. Of the calibration's per-call probes host memory
# has the MPI send and barrier, measured, and no kernel, group or pinned copy: those say so
# and carry no figure.
probe_sql() { # probe_sql EXPR [COND]: EXPR over the probes of $tmp/out (p.value: one probe)
    "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/out'), '\$.probe') p
                         WHERE ${2:-1}"
}
for np in 1 2; do
    "$MPIRUN" $over -np $np "$REFIT_EXEC" --probe --backend mpi --probe-bytes 4M --iters 3 \
        --warmup 1 --json >"$tmp/out" 2>"$tmp/err"
    rc=$?
    ok $rc "--probe on $np rank(s) succeeds"
    [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
    is "$(json "$tmp/out" '$.ranks')|$(json "$tmp/out" '$.backend')|$(json "$tmp/out" '$.exec_config')" \
        "$np|mpi|mpi fill=host" "--probe on $np rank(s): ranks, backend, exec_config"
    is "$("$SQLITE3" :memory: "SELECT json_type(readfile('$tmp/out'), '\$.' || k) FROM
            (SELECT 'device' k UNION ALL SELECT 'nccl_version' UNION ALL SELECT 'cuda_runtime'
             UNION ALL SELECT 'driver')" | tr '\n' ' ')" "null null null null " \
        "--probe on $np rank(s): no device, NCCL, CUDA runtime or driver on host memory"
    is "$(probe_sql "count(*), count(DISTINCT json_extract(p.value, '\$.rank'))")" "$((13 * np))|$np" \
        "--probe on $np rank(s): thirteen probes per rank"
    is "$(probe_sql "group_concat(json_extract(p.value, '\$.name'), ' ')" \
        "json_extract(p.value, '\$.rank') = $((np - 1))")" \
        "copy pack narrow fill check selfsend launch latency group send4k barrier h2d d2h" \
        "--probe on $np rank(s): the probes, in order"
    is "$(probe_sql "count(*)" "json_extract(p.value, '\$.status') = 'ok'
                     AND json_extract(p.value, '\$.seconds') > 0
                     AND json_extract(p.value, '\$.gbps') > 0
                     AND json_extract(p.value, '\$.bytes') > 0
                     AND json_extract(p.value, '\$.impl') != ''
                     AND json_type(p.value, '\$.field') IS NULL")" "$((6 * np))" \
        "--probe on $np rank(s): the replay's six probes ok, timed, with their rate and implementation"
    # send4k and barrier: a median per call in seconds and, as value, in microseconds (the
    # field's unit), no rate; the calibration line takes both.
    is "$(probe_sql "group_concat(json_extract(p.value, '\$.name') || ':' ||
                     json_extract(p.value, '\$.field') || ':' || json_extract(p.value, '\$.impl'), ' ')" \
        "json_extract(p.value, '\$.status') = 'ok' AND json_extract(p.value, '\$.seconds') > 0
         AND json_extract(p.value, '\$.value') > 0 AND json_type(p.value, '\$.gbps') = 'null'
         AND abs(json_extract(p.value, '\$.value') / json_extract(p.value, '\$.seconds') - 1e6) < 1
         AND json_extract(p.value, '\$.calibrates') = 1
         AND json_extract(p.value, '\$.rank') = $((np - 1))")" \
        "send4k:nccl_call_us:MPI_Isend/MPI_Irecv barrier:barrier_us:MPI_Ibarrier" \
        "--probe on $np rank(s): the MPI send and barrier measured, per call, for the calibration"
    is "$(probe_sql "group_concat(json_extract(p.value, '\$.name') || ':' ||
                     json_extract(p.value, '\$.field') || ':' || json_extract(p.value, '\$.calibrates'), ' ')" \
        "json_extract(p.value, '\$.status') = 'not measured (host backend)'
         AND json_type(p.value, '\$.seconds') = 'null' AND json_type(p.value, '\$.value') = 'null'
         AND json_type(p.value, '\$.gbps') = 'null' AND json_extract(p.value, '\$.impl') = '-'
         AND json_extract(p.value, '\$.rank') = $((np - 1))")" \
        "launch:kernel_launch_us:1 latency:kernel_launch_us:0 group:nccl_call_us:0 \
h2d:h2d_gbps:1 d2h:d2h_gbps:1" \
        "--probe on $np rank(s): no kernel, group or pinned copy on host memory, and no figure for them"
    is "$("$SQLITE3" :memory: "SELECT group_concat(key, ' ') FROM json_each(readfile('$tmp/out'),
            '\$.calibration') WHERE value > 0")" "memcpy_gbps quant_gbps nccl_call_us barrier_us" \
        "--probe on $np rank(s): the calibration holds the measured fields only, each positive"
    is "$("$SQLITE3" :memory: "SELECT json_extract(readfile('$tmp/out'), '\$.calibration.barrier_us')
            = json_extract(p.value, '\$.value') FROM json_each(readfile('$tmp/out'), '\$.probe') p
            WHERE json_extract(p.value, '\$.name') = 'barrier' AND json_extract(p.value, '\$.rank') = 0")" \
        1 "--probe on $np rank(s): the calibration's figures are rank 0's"
done
is "$(probe_sql "group_concat(json_extract(p.value, '\$.name') || '=' || json_extract(p.value,
                 '\$.bytes') || ':' || json_extract(p.value, '\$.impl'), ' ')" \
    "json_extract(p.value, '\$.rank') = 0")" \
    "copy=4194304:memcpy pack=1048576:memcpy narrow=4194304:host fill=4194304:host \
check=4194304:host selfsend=4194304:MPI_Isend/MPI_Irecv launch=0:- latency=0:- group=0:- \
send4k=4096:MPI_Isend/MPI_Irecv barrier=0:MPI_Ibarrier h2d=4194304:- d2h=4194304:-" \
    "--probe: bytes (pack: 4 KiB of every 16 KiB; send4k: 4 KiB) and implementations"
"$MPIRUN" $over -np 1 "$REFIT_EXEC" --probe --backend mpi --probe-bytes 1M --iters 1 \
    >"$tmp/out" 2>"$tmp/err"
ok $? "--probe prints a table"
is "$(grep -c -E '^ +0  (copy|pack|narrow|fill|check|selfsend) .* ok$' "$tmp/out")" 6 \
    "with a row per probe"
is "$(grep -c -E '^ +0  (send4k|barrier) .* [0-9.]+  (nccl_call_us|barrier_us) +ok$' "$tmp/out") \
$(grep -c -E '^ +0  (launch|latency|group|h2d|d2h) .* not measured \(host backend\)$' "$tmp/out")" \
    "2 5" "the per-call rows in microseconds with their field; the unmeasured ones say so"
ok "$(grep -q -E "^  rank 0's, to fold into a cluster preset: calibration = \{ memcpy_gbps = [0-9]+, \
quant_gbps = [0-9]+, nccl_call_us = [0-9.e+-]+, barrier_us = [0-9.e+-]+ \}$" "$tmp/out"; echo $?)" \
    "and the calibration line, with the measured fields only"
"$MPIRUN" $over -np 2 "$REFIT_EXEC" --probe --backend mpi --probe-bytes 8K >"$tmp/out" \
    2>"$tmp/err"
is "$? $(grep -c "^refit-exec" "$tmp/err")" "1 1" "--probe refuses buffers too small, in one line"
too_small='^refit-exec: the probes need buffers of 16 KiB or more: rank 0 gets 0 bytes'
too_small="$too_small \\(--probe-bytes 8192; host [^ ]+ has [0-9]+ bytes free\\)\$"
ok "$(grep -q -E "$too_small" "$tmp/err"; echo $?)" \
    "saying which rank gets what, and from which pool"
"$REFIT_EXEC" --probe --probe-bytes 2X >/dev/null 2>"$tmp/err"
is "$? $(head -1 "$tmp/err")" \
    "2 refit-exec: --probe-bytes 2X: expected a positive number of bytes (suffix K, M or G)" \
    "a bad --probe-bytes exits 2 naming it"

# Command line.
"$REFIT_EXEC" --help >"$tmp/out" 2>&1
ok $? "--help exits 0"
ok "$(grep -q 'usage: mpirun -np N refit-exec --db FILE --run ID' "$tmp/out"; echo $?)" \
    "--help prints the usage"
"$REFIT_EXEC" --run 1 --iters 0 >/dev/null 2>"$tmp/err"
is "$? $(head -1 "$tmp/err")" "2 refit-exec: --iters 0: expected a positive number, at most 10000" \
    "a bad option exits 2 naming it"
# Numbers past their range say the range, at once: 2^31 warmups once ran until killed, 10^9
# iterations were "out of memory", and 2^63 was read as run 2^63 - 1.
"$REFIT_EXEC" --run 1 --warmup 2147483648 >/dev/null 2>"$tmp/err"
is "$? $(head -1 "$tmp/err")" "2 refit-exec: --warmup 2147483648: expected a number from 0 to \
10000" "--warmup past its limit is refused with the limit"
"$REFIT_EXEC" --run 1 --iters 1000000000 >/dev/null 2>"$tmp/err"
is "$? $(head -1 "$tmp/err")" "2 refit-exec: --iters 1000000000: expected a positive number, at \
most 10000" "--iters past its limit is refused with the limit"
"$REFIT_EXEC" --run 9223372036854775808 >/dev/null 2>"$tmp/err"
is "$? $(head -1 "$tmp/err")" "2 refit-exec: --run 9223372036854775808: expected a run id (a \
positive integer)" "a run id past int64 is refused, not read as 2^63 - 1"
REFIT_EXEC_FAULT=1:explode "$REFIT_EXEC" --run 1 >/dev/null 2>"$tmp/err"
is "$? $(head -1 "$tmp/err")" \
    "2 refit-exec: REFIT_EXEC_FAULT=1:explode: unknown kind 'explode' (crash, hang or corrupt)" \
    "a malformed fault injection is refused"
# Garbage is refused; so is a fault that cannot fire as asked (a rank beyond the world, a
# round beyond the plan, corruption on a rank that plays no GPU), before the replay and
# with nothing stored.
for f in 1:crash:2x 1:crash: one:crash 1:crash:1:2 "1:crash " 99999999999:hang -1:crash; do
    REFIT_EXEC_FAULT=$f "$REFIT_EXEC" --run 1 >/dev/null 2>"$tmp/err"
    is "$? $(head -1 "$tmp/err")" \
        "2 refit-exec: REFIT_EXEC_FAULT=$f: expected RANK:KIND[:ROUND], KIND one of crash, hang, corrupt" \
        "REFIT_EXEC_FAULT=$f is refused"
done
id=$(plan llama-pair reshard)
rounds=$(sql "$db" "SELECT rounds FROM run WHERE id = $id")
s=s; [ "$rounds" -eq 1 ] && s=
before=$(sql "$db" "SELECT count(*) FROM measurement")
for case in "2:crash|2|rank 2 is not in this world of 2 ranks (0 to 1)" \
    "1:hang:$rounds|2|run $id has $rounds round$s (0 to $((rounds - 1))), not round $rounds" \
    "2:corrupt|3|rank 2 plays no GPU of run $id (it spans 2): it has nothing to corrupt"; do
    f=${case%%|*}
    rest=${case#*|}
    np=${rest%%|*}
    REFIT_EXEC_FAULT=$f run "$np" --run "$id" --backend mpi --check --timeout 10
    is "$rc $(grep "^refit-exec" "$tmp/err" | grep -v 'is set (testing only)')" \
        "1 refit-exec: REFIT_EXEC_FAULT=$f: ${rest#*|}" "REFIT_EXEC_FAULT=$f is refused on $np ranks"
done
is "$(sql "$db" "SELECT count(*) FROM measurement")" "$before" "and nothing is stored"

# The NCCL backend: on a machine without a GPU it fails cleanly and stores a failed row; with
# GPUs it replays the one-GPU colocated plan for real.
id=$(plan llama-pair reshard)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    id=$(plan llama-colocated reshard)
    run 1 --run "$id" --backend nccl --check --iters 2
    ok $rc "the NCCL backend replays a colocated plan on one GPU"
else
    run 2 --run "$id" --backend nccl --check
    ok "$(test $rc -ne 0 && grep -q -e 'no CUDA device' -e 'built without NCCL' "$tmp/err"; echo $?)" \
        "without a GPU the NCCL backend fails with a clear error"
    is "$(last_measurement status)" failed "and its row is failed"
    if ! grep -q 'built without NCCL' "$tmp/err"; then
        REFIT_EXEC_NCCL_BLOCKING=yes run 1 --probe --backend nccl
        is "$rc $(grep "^refit-exec" "$tmp/err")" "1 refit-exec: REFIT_EXEC_NCCL_BLOCKING=yes: \
expected 1 (blocking communicators, the default) or 0 (non-blocking: every NCCL call bounded by \
--timeout)" "a REFIT_EXEC_NCCL_BLOCKING other than 0 or 1 is refused"
    fi
fi

# Faults (testing only): a crash or a hang ends the job within the timeout with an error on
# every rank and a failed row; corruption is caught by the check.
id=$(plan llama-pieces hybrid)
start=$(date +%s)
REFIT_EXEC_FAULT=1:crash run 4 --run "$id" --backend mpi --check --timeout 5
took=$(($(date +%s) - start))
ok "$(test $rc -ne 0; echo $?)" "crash: the job fails"
ok "$(test "$took" -le 15; echo $?)" "crash: the job ends within the timeout ($took s)"
ok "$(grep -q 'rank 1: injected fault (REFIT_EXEC_FAULT): crashing' "$tmp/err"; echo $?)" \
    "crash: the crashing rank says so"
# After a crash mpirun may kill the other ranks before they print (a real crash gives no
# more warning). Even rank 0's line can be lost: mpirun stops forwarding the ranks' output
# once it ends the job (1 run in 5 under load, in a loop of the suite), so the failure must
# be reported by rank 0 or by the launcher, naming the dead rank.
ok "$(grep -q -e '^refit-exec: rank 0: ' -e 'rank 1 .*exited on signal 9' "$tmp/err"; echo $?)" \
    "crash: rank 0 or the launcher reports the failure"
is "$(last_measurement status)" failed "crash: the row is failed"

start=$(date +%s)
REFIT_EXEC_FAULT=2:hang run 4 --run "$id" --backend mpi --check --timeout 3
took=$(($(date +%s) - start))
ok "$(test $rc -ne 0; echo $?)" "hang: the job fails"
ok "$(test "$took" -le 13; echo $?)" "hang: the job ends within the timeout ($took s)"
ok "$(grep -q 'timed out after 3 s waiting' "$tmp/err"; echo $?)" "hang: a wait times out"
every_rank_says 4
ok $? "hang: every rank prints an error"
is "$(last_measurement "status, error_text LIKE '%timed out after 3 s%'")" "failed|1" \
    "hang: the row is failed, with the timeout as its error"

REFIT_EXEC_FAULT=0:corrupt run 4 --run "$id" --backend mpi --check --iters 1
ok "$(test $rc -ne 0; echo $?)" "corrupt: the check fails the run"
ok "$(grep -q 'elements wrong' "$tmp/err"; echo $?)" "corrupt: the receiving rank reports it"
is "$(last_measurement "status, errors > 0, error_text LIKE 'verification found %'")" \
    "failed|1|1" "corrupt: the row is failed with its error count"
REFIT_EXEC_FAULT=0:corrupt run 4 --run "$id" --backend mpi --iters 1
is "$(last_measurement status)" unverified "corrupt without --check: the row is unverified"
is "$(sql "$db" "SELECT count(*) FROM measured_run m JOIN measurement x
                 ON x.id = m.measurement_id WHERE x.status != 'ok'")" 0 \
    "no failed or unverified row is a measurement"

# Under AddressSanitizer: no leak report names refit's own code.
if grep -q __asan_init "$REFIT_EXEC" 2>/dev/null; then
    id=$(plan dsv3-fp8-colocated hybrid)
    ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=exitcode=0 run 4 --run "$id" --backend mpi --check
    ok "$(! grep -E -q '#[0-9]+ .*(/exec/|/sim/)[a-z_]+\.c' "$tmp/err"; echo $?)" \
        "refit-exec frees all it allocates (LeakSanitizer)"
fi
done_testing
