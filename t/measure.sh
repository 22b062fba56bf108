#!/bin/sh
# End to end: `refit measure` stores a refit step's time read from a framework's log as a
# measurement of a run (backend 'log', its phases in measured_phase), refuses what is not
# one and writes nothing then; a version 11 file keeps refit-exec's measurements through the
# migration that rebuilds the table; and `refit calibrate` recovers chosen per-call
# constants from log measurements synthesised with them.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/m.db

# A small NeMo RL step: Qwen3-8B from 4 training GPUs to 4 inference GPUs of one DGX H100.
cat >"$tmp/nemo.lua" <<'LUA'
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 4, tp = 2 },
    infer = { gpus = 4, first_gpu = 4, tp = 2 },
    strategy = "broadcast",
    framework = "nemo-rl",
}
LUA
"$REFIT" measure --help >"$tmp/out" 2>&1
is "$? $(head -1 "$tmp/out")" "0 usage: refit measure RUN --seconds S [--phase NAME=S ...] \
[--source TEXT] [--db FILE]" "measure --help prints the usage"
"$REFIT" measure 1 --seconds 1 --db "$db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $db: no such file" "no database: refused, none created"
ok "$(test ! -e "$db"; echo $?)" "and no file appears"

"$REFIT" sim "$tmp/nemo.lua" --db "$db" >/dev/null
ok $? "refit sim: run 1 under nemo-rl"
step=$(sql "$db" "SELECT step_seconds FROM prediction WHERE run_id = 1")
"$REFIT" measure 1 --seconds 0.06 --phase export=0.05 --phase load=0.01 \
    --source "verl timing_s/update_weights, job 123" --db "$db" >"$tmp/out" 2>"$tmp/err"
ok $? "refit measure stores a step read from a log"
sed 's/^/# /' "$tmp/out" "$tmp/err"
is "$(tail -1 "$tmp/out")" "stored in $db as measurement 1" "and says where"
is "$(sql "$db" "SELECT backend, status, iters, world_size, bytes_verified, seconds, source,
                 seconds_min IS NULL, exec_config IS NULL FROM measurement")" \
    "log|ok|1|0|0|0.06|verl timing_s/update_weights, job 123|1|1" \
    "a measurement of backend log: ok, 1 iteration, nothing verified, its source"
is "$(sql "$db" "SELECT group_concat(phase || '=' || seconds, ' ') FROM
                 (SELECT * FROM measured_phase WHERE measurement_id = 1 ORDER BY phase)")" \
    "export=0.05 load=0.01" "its phases in measured_phase"
is "$(sql "$db" "SELECT backend, compared_with, predicted_seconds = (SELECT step_seconds FROM
                 prediction WHERE run_id = 1), measured_seconds, source
                 FROM predicted_vs_measured")" \
    "log|step|1|0.06|verl timing_s/update_weights, job 123" \
    "predicted_vs_measured compares it with the step"
is "$(sql "$db" "SELECT phase, abs(predicted_seconds - (SELECT sum(seconds) FROM
                 predicted_step_phase WHERE run_id = 1 AND phase = v.phase)) < 1e-15,
                 measured_seconds FROM predicted_vs_measured_phase v ORDER BY phase")" \
    "export|1|0.05
load|1|0.01" "predicted_vs_measured_phase: each phase beside the predicted one"
"$REFIT" show 1 --db "$db" >"$tmp/show.txt"
ratio=$(awk "BEGIN { printf \"%.3f\", 0.06 / $step }")
is "$(sed -n '/^  measured/,$p' "$tmp/show.txt" | sed 's/[0-9T:-]*Z/WHEN/')" \
    "  measured   1 measurement (the latest ok: 0.06 s, $ratio x the predicted step)
    1  WHEN  ok, from a log: 0.06 s (the step); export 0.05 s, load 0.01 s; source verl \
timing_s/update_weights, job 123" "refit show: a measurement from a log, its phases and source"
"$REFIT" show 1 --db "$db" --json >"$tmp/show.json"
is "$(json "$tmp/show.json" '$.measurements[0].backend')|$(json "$tmp/show.json" \
    '$.measurements[0].source')|$(json "$tmp/show.json" '$.measurements[0].phases.export')" \
    "log|verl timing_s/update_weights, job 123|0.05" "refit show --json: backend, source, phases"
"$REFIT" measure 1 --seconds 0.07 --phase transfer=0.04 --db "$db" --json >"$tmp/m.json"
ok $? "refit measure --json"
is "$(json "$tmp/m.json" '$.measurement_id')|$(json "$tmp/m.json" '$.seconds')|$(json \
    "$tmp/m.json" '$.compared_with')|$(json "$tmp/m.json" '$.phases[0].phase')|$(json \
    "$tmp/m.json" '$.source')" "2|0.07|step|transfer|" \
    "--json: the id, the time, what it is compared with, the phases; no source"
is "$(json "$tmp/m.json" '$.predicted_s')" "$(sql "$db" "SELECT step_seconds FROM prediction")" \
    "and the predicted step"

# Refusals: each says what is wrong, and nothing is written.
rows() { sql "$db" "SELECT (SELECT count(*) FROM measurement) || ' ' ||
                           (SELECT count(*) FROM measured_phase)"; }
before=$(rows)
refuse() { # refuse WANT-EXIT WANT-MESSAGE DESCRIPTION ARGS...
    want_rc=$1 want=$2 what=$3
    shift 3
    "$REFIT" measure "$@" --db "$db" >"$tmp/out" 2>"$tmp/err"
    is "$? $(cat "$tmp/err")|$(cat "$tmp/out")|$(rows)" "$want_rc $want||$before" "$what"
}
refuse 1 "refit: no run 9 in $db" "an unknown run" 9 --seconds 1
range="must be from 1e-06 to 1e+06 s (a unit slip?)"
refuse 1 "refit: seconds 0: the step's time $range" "seconds 0" 1 --seconds 0
refuse 1 "refit: seconds -2: the step's time $range" "seconds < 0" 1 --seconds -2
refuse 1 "refit: seconds nan: the step's time $range" "seconds nan" 1 --seconds nan
refuse 1 "refit: seconds inf: the step's time $range" "seconds inf" 1 --seconds inf
refuse 1 "refit: seconds 1e-300: the step's time $range" "seconds 1e-300 (no refit's time)" \
    1 --seconds 1e-300
refuse 1 "refit: seconds 2e+06: the step's time $range" "seconds 2e6 (23 days)" 1 --seconds 2e6
refuse 2 "refit: --seconds 1s: expected a number of seconds (see refit measure --help)" \
    "seconds with a unit" 1 --seconds 1s
refuse 2 "refit: --seconds S is required (the step's time the log printed) (see refit measure \
--help)" "no --seconds" 1 --phase load=1
refuse 1 "refit: phase export given twice" "a phase twice" \
    1 --seconds 1 --phase export=0.5 --phase export=0.25
refuse 1 "refit: phase load: 2 s is more than the whole step's 1 s" "a phase longer than the step" \
    1 --seconds 1 --phase load=2
refuse 1 "refit: phase export: -1 s: must be 0 or from 1e-06 to 1e+06 s" "a negative phase" \
    1 --seconds 1 --phase export=-1
refuse 1 "refit: phase export: 1e-09 s: must be 0 or from 1e-06 to 1e+06 s" \
    "a phase of a nanosecond" 1 --seconds 1 --phase export=1e-9
refuse 2 "refit: --phase unpack=0.1: unknown phase 'unpack' (the step's are export, transfer, \
load, finalize, prepare, resume) (see refit measure --help)" "an unknown phase, with the valid \
ones" \
    1 --seconds 1 --phase unpack=0.1
refuse 2 "refit: --phase load: expected NAME=SECONDS (see refit measure --help)" \
    "a phase without seconds" 1 --seconds 1 --phase load
refuse 2 "refit: RUN x: expected a run id (a positive integer) (see refit measure --help)" \
    "a run that is not an id" x --seconds 1
refuse 1 "refit: --source: not valid UTF-8 (a label is stored as text)" "a source not UTF-8" \
    1 --seconds 1 --source "$(printf 'job \377')"

# A version 11 file (t/data/store/v11.sql: refit-exec measured its run 1 three
# times, the second measurement deleted) is migrated by refit measure: the rebuilt table
# keeps every row, id and round, and takes the new backend.
old=$tmp/v11.db
"$SQLITE3" "$old" <"$SRCDIR/t/data/store/v11.sql"
keep="SELECT id, run_id, created_at, backend, world_size, iters, warmup, seconds, seconds_min,
      seconds_max, bytes_verified, errors, status, error_text, hosts, gpu_model, nccl_version,
      mpi_version, exec_config FROM measurement ORDER BY id"
m_before=$(sql "$old" "$keep")
r_before=$(sql "$old" "SELECT * FROM measured_round ORDER BY 1, 2")
is "$(sql "$old" "PRAGMA user_version") $(sql "$old" "SELECT group_concat(id) FROM measurement")" \
    "11 1,3" "a version 11 file with measurements 1 and 3"
"$REFIT" measure 1 --seconds 0.5 --phase load=0.1 --db "$old" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $old: run 1 has no predicted step (refit sim under a framework \
profile): its phases have nothing to be compared with" \
    "phases of a run without a step are refused"
is "$(sql "$old" "PRAGMA user_version")" 16 "(the open migrated the file to version 16)"
"$REFIT" measure 1 --seconds 0.5 --source "a log" --db "$old" >"$tmp/out" 2>"$tmp/err"
ok $? "a log measurement of that run (its wire: no profile)"
sed 's/^/# /' "$tmp/out" "$tmp/err"
is "$(sql "$old" "$keep" | head -2)" "$m_before" "refit-exec's measurements are kept, every column"
is "$(sql "$old" "SELECT * FROM measured_round ORDER BY 1, 2")" "$r_before" \
    "with their rounds (7 each)"
is "$(sql "$old" "SELECT group_concat(id || ':' || backend || ':' || coalesce(source, '-'))
                  FROM measurement")" "1:mpi:-,3:mpi:-,4:log:a log" \
    "the new one takes the next id, backend log"
is "$(sql "$old" "SELECT group_concat(measurement_id || ':' || compared_with) FROM
                  predicted_vs_measured")" "1:wire,3:wire,4:wire" \
    "predicted_vs_measured: all three, a profile-free run's against its wire"
sql "$old" "INSERT INTO measurement (run_id, backend, world_size, iters, warmup, status)
            VALUES (1, 'rdma', 2, 1, 0, 'ok')" 2>"$tmp/err"
ok "$(grep -q "CHECK constraint failed: backend IN ('nccl', 'mpi', 'log')" "$tmp/err"; echo $?)" \
    "the rebuilt table still checks its backend"
sql "$old" "PRAGMA foreign_keys = ON; DELETE FROM measurement WHERE id = 1"
is "$(sql "$old" "SELECT count(*) FROM measured_round WHERE measurement_id = 1")" 0 \
    "and its rounds still go with their measurement"
sql "$old" "PRAGMA integrity_check; PRAGMA foreign_key_check" >"$tmp/out"
is "$(cat "$tmp/out")" "ok" "the migrated file passes integrity and foreign key checks"

# Log measurements of the step, after calibrate: a profile-free run's against its wire.
"$REFIT" calibrate --db "$old" --cluster dgx-h100 --out "$tmp/old-cal.lua" --json \
    >"$tmp/old.json" 2>"$tmp/err"
ok $? "refit calibrate takes a log measurement beside refit-exec's"
sed 's/^/# /' "$tmp/err"
is "$("$SQLITE3" :memory: "SELECT group_concat(p.value->>'measurement_id' || ':' ||
     (p.value->>'backend') || ':' || (p.value->>'compared_with'))
     FROM json_each(readfile('$tmp/old.json'), '$.points') AS p")" "3:replay:wire,4:log:wire" \
    "each point says what it was compared with (no profile: the wire)"

# The recovery target: log measurements synthesised from a profile with chosen per-call
# costs give those costs back. Four NeMo RL steps whose tensor counts differ (dense, MoE with
# stacked experts, MLA with experts, Qwen3-8B) are predicted twice: with the preset's
# defaults (tensor_overhead_us 10, bucket_overhead_us 50, nccl_call_us 3.5) into the
# database, and with chosen costs (37, 180 and 12) into another, whose step seconds are
# imported as the first's log measurements. calibrate must find 37, 180 and 12 within 5%.
fit=$tmp/fit.db truth=$tmp/truth.db
chosen=", calibration = { tensor_overhead_us = 37, bucket_overhead_us = 180, nccl_call_us = 12 }"
scenario() { # scenario FILE MODEL TRAIN INFER [CLUSTER-EXTRA]
    cat >"$1" <<LUA
return {
    model = "$2",
    cluster = { system = "dgx-h100", nodes = 1 ${5:-} },
    train = { $3 },
    infer = { $4 },
    strategy = "broadcast",
    framework = "nemo-rl",
}
LUA
}
ex=$(cd "$SRCDIR/t/data/exec" && pwd)
k=0
for spec in "$ex/tiny-llama.lua|gpus = 2, tp = 2|gpus = 2, first_gpu = 2, tp = 2" \
    "$ex/tiny-qwen3-moe.lua|gpus = 2, ep = 2|gpus = 2, first_gpu = 2" \
    "$ex/tiny-dsv3.lua|gpus = 4, tp = 2, ep = 2|gpus = 4, first_gpu = 4, tp = 4" \
    "qwen3-8b|gpus = 4, tp = 2|gpus = 4, first_gpu = 4, tp = 2"; do
    k=$((k + 1))
    model=${spec%%|*} rest=${spec#*|}
    train=${rest%%|*} infer=${rest#*|}
    scenario "$tmp/s$k.lua" "$model" "$train" "$infer"
    scenario "$tmp/t$k.lua" "$model" "$train" "$infer" "$chosen"
    "$REFIT" sim "$tmp/s$k.lua" --db "$fit" >/dev/null 2>"$tmp/err" &&
        "$REFIT" sim "$tmp/t$k.lua" --db "$truth" >/dev/null 2>>"$tmp/err" &&
        "$REFIT" measure "$k" --db "$fit" --source "synthesised: tensor 37, bucket 180, nccl 12" \
            --seconds "$(sql "$truth" "SELECT printf('%.17g', step_seconds) FROM prediction
                                       WHERE run_id = $k")" >/dev/null 2>>"$tmp/err"
    ok $? "run $k ($(basename "$model" .lua)): predicted with the defaults, measured with the \
chosen costs"
    sed 's/^/# /' "$tmp/err"
done
is "$(sql "$fit" "SELECT count(DISTINCT r.transfers) FROM run r")" 4 \
    "the four runs' plans differ"
(cd "$tmp" && "$REFIT" calibrate --db "$fit" --cluster dgx-h100 >"$tmp/cal.txt" 2>"$tmp/err")
ok $? "refit calibrate fits the defaults to the log measurements"
sed 's/^/# /' "$tmp/cal.txt" "$tmp/err"
(cd "$tmp" && "$REFIT" calibrate --db "$fit" --cluster dgx-h100 --framework nemo-rl \
    --out "$tmp/cal.lua" --json >"$tmp/cal.json" 2>"$tmp/err")
ok $? "and with --framework nemo-rl, as JSON"
within() { # within JSON-PATH WANT: the fitted knob within 5% of WANT
    "$SQLITE3" :memory: "SELECT abs(json_extract(readfile('$tmp/cal.json'), '$1') / $2 - 1)
                         < 0.05"
}
is "$(within '$.parameters.tensor_overhead_us.after' 37)" 1 \
    "tensor_overhead_us recovered within 5% of 37 ($(json "$tmp/cal.json" \
    '$.parameters.tensor_overhead_us.after'))"
is "$(within '$.parameters.bucket_overhead_us.after' 180)" 1 \
    "bucket_overhead_us recovered within 5% of 180 ($(json "$tmp/cal.json" \
    '$.parameters.bucket_overhead_us.after'))"
is "$(within '$.parameters.nccl_call_us.after' 12)" 1 \
    "nccl_call_us recovered within 5% of 12 ($(json "$tmp/cal.json" \
    '$.parameters.nccl_call_us.after'))"
is "$(within '$.parameters.nvlink_efficiency.after' 0.82)" 1 \
    "nvlink_efficiency, which the steps also move, stays at the truth's 0.82"
is "$(json "$tmp/cal.json" '$.parameters.message_latency_us.identifiable') $(json \
    "$tmp/cal.json" '$.parameters.message_latency_us.tied_to')" "0 bucket_overhead_us" \
    "message_latency_us, which adds to bucket_overhead_us on every broadcast, is tied to it"
is "$(json "$tmp/cal.json" '$.parameters.barrier_us.identifiable') $(json \
    "$tmp/cal.json" '$.parameters.barrier_us.after')" "0 16.7" \
    "a per-call cost these steps do not use is kept (barrier_us: M2N's kernels only)"
is "$("$SQLITE3" :memory: "SELECT count(*) FROM json_each(readfile('$tmp/cal.json'), '$.points')
     AS p WHERE p.value->>'compared_with' = 'step' AND p.value->>'backend' = 'log'
     AND abs(p.value->>'after_s' / (p.value->>'measured_s') - 1) < 0.001
     AND abs(p.value->>'before_s' / (p.value->>'measured_s') - 1) > 0.01")" 4 \
    "every step: off by more than 1% before, within 0.1% after"
is "$(grep -c '^[0-9]' "$tmp/cal.txt")" 4 "the table has one row per measurement"
# Before the fit each step is re-predicted from the store exactly as refit sim predicted it.
is "$("$SQLITE3" "$fit" "SELECT count(*) FROM json_each(readfile('$tmp/cal.json'), '$.points') AS p
     JOIN prediction r ON r.run_id = p.value->>'run_id'
     WHERE abs(p.value->>'before_s' / r.step_seconds - 1) < 1e-12")" 4 \
    "calibrate rebuilds each step from the database as refit sim predicted it"
ok "$(grep -q '^        barrier_us = 16.7,$' "$tmp/cal.lua" &&
    grep -q '^        loader_scan_us = 0.0479,$' "$tmp/cal.lua"; echo $?)" \
    "the written cluster carries the per-call costs it did not fit"
# The calibrated cluster predicts the chosen costs' steps.
sed "s|system = \"dgx-h100\"|system = \"$tmp/cal.lua\"|" "$tmp/s4.lua" >"$tmp/again.lua"
"$REFIT" sim "$tmp/again.lua" --db "$truth" --json >"$tmp/again.json" 2>"$tmp/err"
ok $? "a scenario on the calibrated cluster"
is "$(sql "$truth" "SELECT abs(a.step_seconds / t.step_seconds - 1) < 0.01 FROM prediction a,
                    prediction t WHERE a.run_id = $(json "$tmp/again.json" '$.run_id')
                    AND t.run_id = 4")" 1 "predicts the chosen costs' step within 1%"
"$REFIT" calibrate --db "$fit" --cluster dgx-h100 --framework verl --out "$tmp/v.lua" \
    >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $fit: no usable measurement: no run predicted on cluster \
'dgx-h100' under framework 'verl' (refit sim) has an ok measurement (refit-exec --check, or \
refit measure)" "--framework keeps the runs of that profile only"

# The phases a log printed are fitted too: one run's export, transfer and load alone give
# tensor_overhead_us (in export and load) and bucket_overhead_us (on the wire) back, here
# from Qwen3-8B's step with those two chosen. Its wire is mostly bandwidth: on a tiny
# model's it is all fixed costs, and NVLink's efficiency moves it as bucket_overhead_us does
# (calibrate then ties them); its export's NCCL calls overlap the collectives, so one run
# cannot tell nccl_call_us from NVLink's efficiency either (the four runs above can).
one=$tmp/one.db
scenario "$tmp/t5.lua" qwen3-8b "gpus = 4, tp = 2" "gpus = 4, first_gpu = 4, tp = 2" \
    ", calibration = { tensor_overhead_us = 37, bucket_overhead_us = 180 }"
"$REFIT" sim "$tmp/t5.lua" --db "$truth" >/dev/null
"$REFIT" sim "$tmp/s4.lua" --db "$one" >/dev/null
phases=$(sql "$truth" "SELECT group_concat('--phase ' || phase || '=' || printf('%.17g', s), ' ')
                       FROM (SELECT phase, sum(seconds) AS s FROM predicted_step_phase
                             WHERE run_id = 6 GROUP BY phase HAVING s > 0)")
# shellcheck disable=SC2086
"$REFIT" measure 1 --db "$one" $phases --seconds "$(sql "$truth" "SELECT printf('%.17g',
    step_seconds) FROM prediction WHERE run_id = 6")" >/dev/null
ok $? "one run measured with its phases ($phases)"
(cd "$tmp" && "$REFIT" calibrate --db "$one" --cluster dgx-h100 --out "$tmp/one.lua" --json \
    >"$tmp/cal.json" 2>"$tmp/err")
ok $? "refit calibrate on that one measurement"
is "$(within '$.parameters.tensor_overhead_us.after' 37) $(within \
    '$.parameters.bucket_overhead_us.after' 180)" "1 1" "its phases identify both costs within 5%"
is "$("$SQLITE3" :memory: "SELECT group_concat(ph.value->>'phase') FROM
     json_each(readfile('$tmp/cal.json'), '$.points[0].phases') AS ph")" "export,transfer,load" \
    "--json lists each phase with its error before and after"

done_testing
