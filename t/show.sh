#!/bin/sh
# End to end: `refit show` prints a stored run on one screen from what the store holds (the
# resolved scenario, the preset's overridden fields, memory, prediction, measurements), and
# `refit diff` prints what differs between two runs' scenarios (dotted paths) and figures.
# A run stored before schema 7 (t/data/store/v6.sql) is shown with what its row says.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/show.db
data=$SRCDIR/t/data/describe
preset=$REFIT_MODELS/clusters/dgx-h100.lua

"$REFIT" sim "$data/plain.lua" --db "$db" --label plain --json >"$tmp/plain.json"
ok $? "refit sim plain.lua (run 1)"
"$REFIT" sim "$data/over.lua" --db "$db" >"$tmp/over.txt"
ok $? "refit sim over.lua: oversubscription 2 and PXN off (run 2)"
"$REFIT" sim "$data/over.lua" --db "$db" --json >"$tmp/over.json"
ok $? "over.lua again (run 3)"

# The description is deterministic: the same scenario twice gives the same text.
is "$(sql "$db" "SELECT count(DISTINCT scenario_json), count(scenario_json) FROM run
                 WHERE id IN (2, 3)")" "1|2" "two runs of one scenario store the same JSON"
# It says what the planner used: every column of the side table, in the description.
is "$(sql "$db" "SELECT count(*) FROM side s JOIN run r ON r.id = s.run_id WHERE
    json_extract(r.scenario_json, '$.' || s.side || '.gpus') = s.gpus AND
    json_extract(r.scenario_json, '$.' || s.side || '.first_gpu') = s.first_gpu AND
    json_extract(r.scenario_json, '$.' || s.side || '.tp') = s.tp AND
    json_extract(r.scenario_json, '$.' || s.side || '.pp') = s.pp AND
    json_extract(r.scenario_json, '$.' || s.side || '.dp') = s.dp AND
    json_extract(r.scenario_json, '$.' || s.side || '.ep') = s.ep AND
    coalesce(json_extract(r.scenario_json, '$.' || s.side || '.replicas'), 1) = s.replicas AND
    coalesce(json_extract(r.scenario_json, '$.' || s.side || '.cp'), 1) = s.cp AND
    json_extract(r.scenario_json, '$.' || s.side || '.dtype') = s.dtype AND
    replace(replace(json_extract(r.scenario_json, '$.' || s.side || '.stage_layers'), '[', ''),
            ']', '') = s.stage_layers")" 6 "the description's sides are the side table's"
is "$(sql "$db" "SELECT json_extract(scenario_json, '$.cluster.fabric.oversubscription'),
                        json_extract(scenario_json, '$.cluster.fabric.pxn'),
                        json_extract(scenario_json, '$.cluster.nodes'),
                        json_extract(scenario_json, '$.cluster_preset.fabric.pxn'),
                        json_extract(scenario_json, '$.staging_bytes')
                 FROM run WHERE id = 2")" "2.0|0|2|1|1000000" \
    "run 2's description holds the overrides and the preset's values"
# The memory lines: the table holds what the command computed (its --json), part by part.
is "$(sql "$db" "SELECT group_concat(side || ' ' || gpu || ' ' || weights_bytes || ' ' ||
                 grads_bytes || ' ' || optimizer_bytes || ' ' || staging_bytes || ' ' ||
                 total_bytes || ' ' || budget_bytes || ' ' || headroom_bytes || ' ' || fits, ', ')
                 FROM (SELECT * FROM memory WHERE run_id = 3 ORDER BY side DESC)")" \
    "$("$SQLITE3" :memory: "SELECT group_concat(s || ' ' || (m->>'gpu') || ' ' ||
       (m->>'weights_bytes') || ' ' || (m->>'grads_bytes') || ' ' || (m->>'optimizer_bytes')
       || ' ' || (m->>'staging_bytes') || ' ' || (m->>'total_bytes') || ' ' ||
       (m->>'budget_bytes') || ' ' || (m->>'headroom_bytes') || ' ' || (m->>'fits'), ', ')
       FROM (SELECT 'train' AS s, json_extract(readfile('$tmp/over.json'), '$.memory.train')
             AS m UNION ALL SELECT 'infer', json_extract(readfile('$tmp/over.json'),
             '$.memory.infer'))")" "table memory holds each side's worst GPU by part"
is "$(sql "$db" "SELECT train_memory_bytes = t.total_bytes, infer_memory_bytes = i.total_bytes,
                 infer_kv_headroom_bytes = i.headroom_bytes, memory_overcommitted
                 FROM run_memory v JOIN memory t ON t.run_id = v.run_id AND t.side = 'train'
                 JOIN memory i ON i.run_id = v.run_id AND i.side = 'infer'
                 WHERE v.run_id = 2")" "1|1|1|0" "view run_memory: a run's memory in one row"

created=$(sql "$db" "SELECT created_at FROM run WHERE id = 2")
pred=$(sql "$db" "SELECT seconds, lower_bound_seconds, bottleneck FROM prediction WHERE run_id = 2")
secs=$(echo "$pred" | awk -F'|' '{ printf "%.6g s (bound %.6g s)", $1, $2 }')
bott=${pred##*|}
"$REFIT" show 2 --db "$db" >"$tmp/show.txt" 2>"$tmp/err"
ok $? "refit show 2"
sed 's/^/# /' "$tmp/show.txt" "$tmp/err"
cat >"$tmp/want.txt" <<EOF
run 2: tiny-llama, strategy reshard, stored $created
  scenario   $data/over.lua
  model      tiny-llama ($data/../exec/tiny-llama.lua): 0.004 B params, 8.66 MB, 4 layers, 0 experts
  train      8 GPUs from 0, tp2 cp1 pp1 dp4 ep1 etp1, bf16, distributed optimizer
  infer      8 GPUs from 8, tp4 pp1 dp1 ep1 x2 replicas, bf16, gpu_memory_utilization 0.9
  cluster    dgx-h100 ($preset): 2 nodes x 8 GPUs, 80 GB HBM, NVLink domains of 8, 8 NICs x 50 GB/s a node, pxn off
  overrides  cluster.fabric.nodes_per_leaf 1 (preset 32), cluster.fabric.oversubscription 2.0 (preset 1.0), cluster.fabric.pxn false (preset true), cluster.nodes 2 (preset 1)
  plan       staging 1.00 MB a GPU and round, chunk 1.00 MB, sources balanced, relay ring fanout 1 depth 0
  tensors    attention reshard 16, dense_ffn reshard 12, embedding reshard 1, lm_head reshard 1, norm reshard 9
$(grep '^  memory ' "$tmp/over.txt")
  prediction $secs on dgx-h100, bottleneck $bott
             payload 17.34 MB, fabric 17.34 MB, NVLink 0 B, 3 rounds
  measured   none
EOF
is "$(diff "$tmp/want.txt" "$tmp/show.txt" && echo same)" same \
    "the scenario, its overrides of the preset, memory (as refit sim printed it), prediction"
is "$(grep -c '^  memory ' "$tmp/over.txt")" 2 "(refit sim printed both memory lines)"

# A measurement as refit-exec stores one: show lists it with how it ran.
sql "$db" "INSERT INTO measurement (run_id, created_at, backend, world_size, iters, warmup,
           seconds, seconds_min, seconds_max, status, exec_config) VALUES
           (2, '2026-01-02T03:04:05Z', 'mpi', 16, 5, 1, 0.002, 0.0015, 0.0025, 'ok',
           'mpi fill=host NCCL_PXN_DISABLE=1')"
"$REFIT" show 2 --db "$db" >"$tmp/show.txt"
ratio=$(echo "$pred" | awk -F'|' '{ printf "%.3f", 0.002 / $1 }')
is "$(sed -n '/^  measured/,$p' "$tmp/show.txt")" "  measured   1 measurement (the latest ok: \
0.002 s, $ratio x the prediction)
    1  2026-01-02T03:04:05Z  ok, mpi on 16 ranks, 5 iterations: 0.002 s (min 0.0015, max \
0.0025); exec_config mpi fill=host NCCL_PXN_DISABLE=1" "and its measurements, with exec_config"

"$REFIT" show 1 --db "$db" >"$tmp/show1.txt"
is "$(sed -n '1p; /overrides/p' "$tmp/show1.txt")" "run 1 (label \"plain\"): tiny-llama, strategy \
reshard, stored $(sql "$db" "SELECT created_at FROM run WHERE id = 1")
  overrides  cluster.fabric.nodes_per_leaf 1 (preset 32), cluster.nodes 2 (preset 1)" \
    "run 1: its label and its own overrides"

"$REFIT" show 2 --db "$db" --json >"$tmp/show.json"
ok $? "refit show --json"
is "$(json "$tmp/show.json" '$.scenario_stored')|$(json "$tmp/show.json" \
    '$.scenario.cluster.fabric.pxn')|$(json "$tmp/show.json" '$.memory.train.total_bytes')|$(json \
    "$tmp/show.json" '$.prediction.bottleneck')|$(json "$tmp/show.json" \
    '$.measurements[0].exec_config')" \
    "1|0|$(sql "$db" "SELECT total_bytes FROM memory WHERE run_id = 2 AND side = 'train'")|$bott|mpi \
fill=host NCCL_PXN_DISABLE=1" "--json: the stored scenario in full, memory, prediction, measurements"
ok "$(grep -q '"nvlink_efficiency": 0.82,' "$tmp/show.json"; echo $?)" \
    "--json writes reals exactly and shortest (0.82)"

# diff: the scenarios' dotted paths, then the figures.
pa=$(sql "$db" "SELECT seconds FROM prediction WHERE run_id = 1")
pb=$(sql "$db" "SELECT seconds FROM prediction WHERE run_id = 2")
"$REFIT" diff 1 2 --db "$db" >"$tmp/diff.txt" 2>"$tmp/err"
ok $? "refit diff 1 2"
sed 's/^/# /' "$tmp/diff.txt" "$tmp/err"
is "$(sed -n '1,/^figures/p' "$tmp/diff.txt")" "run 1 -> run 2
scenario: 3 differences
  cluster.fabric.oversubscription: 1.0 -> 2.0
  cluster.fabric.pxn: true -> false
  source: \"$data/plain.lua\" -> \"$data/over.lua\"
figures:" "diff: the two overrides and the file, as dotted paths"
is "$(grep -E '^  (payload_bytes|predicted_s|measured_s) ' "$tmp/diff.txt")" \
    "$(awk -v a="$pa" -v b="$pb" 'BEGIN {
        printf "  %-24s 17338368 -> 17338368  (same)\n", "payload_bytes"
        printf "  %-24s %.6g -> %.6g  (x%.3f)\n", "predicted_s", a, b, b / a
        printf "  %-24s - -> 0.002\n", "measured_s" }')" \
    "and the figures: payload, predicted (with the ratio), measured"
"$REFIT" diff 2 3 --db "$db" >"$tmp/diff.txt"
is "$(sed -n 2p "$tmp/diff.txt")" "scenario: 0 differences" "one scenario twice: no difference"
"$REFIT" diff 1 2 --db "$db" --json >"$tmp/diff.json"
is "$(json "$tmp/diff.json" '$.scenario[1].path')|$(json "$tmp/diff.json" \
    '$.scenario[1].a')|$(json "$tmp/diff.json" '$.scenario[1].b')|$(json "$tmp/diff.json" \
    '$.figures.measured_s.b')" "cluster.fabric.pxn|1|0|0.002" "diff --json: paths, values, figures"

# auto records its choices: the PXN, sources and relay it chose, in show and diff.
"$REFIT" sim "$data/over.lua" --db "$db" --strategy auto --json >"$tmp/auto.json"
ok $? "refit sim over.lua --strategy auto (run 4)"
choice=$(json "$tmp/auto.json" '$.auto_choice')
"$REFIT" show 4 --db "$db" >"$tmp/show.txt"
is "$(grep '^  auto ' "$tmp/show.txt")" "  auto       $choice ($(json "$tmp/auto.json" \
'$.auto_evaluated') candidates predicted, $(sql "$db" "SELECT json_extract(scenario_json, '$.auto.pruned')
FROM run WHERE id = 4") only bounded)" "show: auto's choice"
case $choice in "pxn on"*) pxn=1 ;; *) pxn=0 ;; esac
case $choice in *"local sources"*) src=local ;; *) src=balanced ;; esac
is "$(sql "$db" "SELECT json_extract(scenario_json, '$.auto.pxn'),
                 json_extract(scenario_json, '$.auto.sources') FROM run WHERE id = 4")" "$pxn|$src" "the description has auto's PXN and sources"
"$REFIT" diff 2 4 --db "$db" >"$tmp/diff.txt"
ok "$(grep -q '^  strategy: "reshard" -> "auto"$' "$tmp/diff.txt" &&
    grep -q "^  auto.pxn: (none) -> $(test $pxn = 1 && echo true || echo false)$" \
        "$tmp/diff.txt"; echo $?)" "diff: the strategy and auto's PXN"

# A run stored by schema 6 has no description and no memory rows.
old=$tmp/old.db
"$SQLITE3" "$old" <"$SRCDIR/t/data/store/v6.sql"
"$REFIT" show 1 --db "$old" >"$tmp/out" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $old: schema version 6 is older than this refit (16): run \
refit plan/sim on it once to upgrade, or open it writable" "a schema-6 file: show says how to upgrade"
"$REFIT" sim "$data/plain.lua" --db "$old" >/dev/null
ok $? "refit sim migrates it (run 2)"
"$REFIT" show 1 --db "$old" >"$tmp/show.txt" 2>"$tmp/err"
ok $? "refit show of the schema-6 run"
sed 's/^/# /' "$tmp/show.txt" "$tmp/err"
cat >"$tmp/want.txt" <<EOF
run 1: tiny-llama, strategy reshard, stored 2026-12-01T14:53:14Z
  scenario   t/data/exec/llama-pair.lua (its resolved scenario was not stored: the run predates schema 7)
  train      1 GPU from 0, tp1 cp1 pp1 dp1 ep1 etp1, bf16
  infer      1 GPU from 1, tp1 pp1 dp1 ep1 x1 replicas, bf16
  cluster    dgx-h100, 1 node
  memory     not stored (the run predates schema 7)
  prediction 0.000426561 s (bound 2.07147e-05 s) on dgx-h100, bottleneck nvl_out[gpu 0]
             payload 8.66 MB, fabric 0 B, NVLink 8.66 MB, 7 rounds
  measured   1 measurement (the latest ok: 0.0104707 s, 24.547 x the prediction)
    1  2026-12-01T14:53:14Z  ok, mpi on 2 ranks, 3 iterations: 0.0104707 s (min 0.000934694, max 0.0111276); exec_config mpi fill=host
EOF
is "$(diff "$tmp/want.txt" "$tmp/show.txt" && echo same)" same \
    "shown with what its row holds, saying the scenario and memory were not stored"
"$REFIT" show 1 --db "$old" --json >"$tmp/show.json"
is "$(json "$tmp/show.json" '$.scenario_stored')|$(json "$tmp/show.json" \
    '$.scenario')|$(json "$tmp/show.json" '$.memory')|$(json "$tmp/show.json" \
    '$.run_row.cluster_system')" "0|||dgx-h100" "--json: scenario and memory null, the run row"
"$REFIT" diff 1 2 --db "$old" >"$tmp/diff.txt"
is "$(sed -n '2,/^figures/p' "$tmp/diff.txt")" "run 1 has no stored scenario (it predates \
schema 7): comparing what the run rows say
scenario: 6 differences
  run.cluster_nodes: 1 -> 2
  run.infer_gpus: 1 -> 8
  run.infer_layout: \"tp1 pp1 dp1 ep1 x1 replicas\" -> \"tp4 pp1 dp1 ep1 x2 replicas\"
  run.source: \"t/data/exec/llama-pair.lua\" -> \"$data/plain.lua\"
  run.train_gpus: 1 -> 8
  run.train_layout: \"tp1 cp1 pp1 dp1 ep1 etp1\" -> \"tp2 cp1 pp1 dp4 ep1 etp1\"
figures:" "diff with an old run: compares the run rows, and says so"
is "$(grep -E '^  (measured_s|train_memory_bytes) ' "$tmp/diff.txt")" \
    "  measured_s               0.0104707 -> -
  train_memory_bytes       - -> $(sql "$old" "SELECT total_bytes FROM memory WHERE run_id = 2
                                              AND side = 'train'")" \
    "its figures: the old run's measurement, the new run's memory"

# The step's phases (schema 8), from runs t/step-db stores with hand-made steps (refit sim
# computes none until sim/step.c): show lists them in the step's order with their share of
# the step; a profile-free run has no step lines and no "step" key.
sdb=$tmp/step.db
"$REFIT" sim "$data/plain.lua" --db "$sdb" >/dev/null
ok $? "a profile-free run (run 1)"
is "$("$STEP_DB" "$sdb" | tr '\n' ' ')" "2 3 " "t/step-db stores two runs with steps (runs 2, 3)"
"$REFIT" show 2 --db "$sdb" >"$tmp/show.txt" 2>"$tmp/err"
ok $? "refit show 2"
sed 's/^/# /' "$tmp/show.txt" "$tmp/err"
cat >"$tmp/want.txt" <<EOF
  prediction 2 s (bound 1.5 s) on dgx-h100, bottleneck -
             payload 144 B, fabric 0 B, NVLink 0 B, 0 rounds
  step       3.5 s: 1 buffer: export + transfer + load
  phases     part  phase        seconds   share  mechanism
             all   export           0.5   14.3%  Megatron-Bridge export: TP all-gather per tensor, HF naming
             all   transfer           2   57.1%  NCCL broadcast of 1 GB buckets from the first training GPU
             all   load            0.75   21.4%  vLLM load_weights: one copy per tensor, FP8 quantisation
             all   finalize        0.25    7.1%  process_weights_after_loading
  measured   none
EOF
is "$(sed -n '/^  prediction/,$p' "$tmp/show.txt" | diff "$tmp/want.txt" - && echo same)" same \
    "show: the step, its composition, each phase with its share (0.5 / 3.5 = 14.3%)"
"$REFIT" show 3 --db "$sdb" >"$tmp/show.txt"
is "$(sed -n '/^  step /,/^  measured/p' "$tmp/show.txt" | awk 'NR > 2 { print $1, $2, $3, $4 }' |
    tr '\n' ',')" "bulk export 0.125 10.0%,bulk transfer 0.5 40.0%,bulk load 0.25 20.0%,misc \
transfer 0.375 30.0%,all finalize 0.25 20.0%,measured none  ," \
    "hybrid: the bulk, the rest, then finalize, in the step's order (not sorted by part)"
"$REFIT" show 1 --db "$sdb" >"$tmp/show.txt"
is "$(grep -c -E '^  (step|phases) ' "$tmp/show.txt")" 0 "a profile-free run shows no step"
"$REFIT" show 3 --db "$sdb" --json >"$tmp/show.json"
is "$(json "$tmp/show.json" '$.step.seconds')|$(json "$tmp/show.json" \
    '$.step.phases[3].part')|$(json "$tmp/show.json" '$.step.phases[3].phase')|$(json \
    "$tmp/show.json" '$.step.phases[3].share')|$(json "$tmp/show.json" \
    '$.step.phases[3].calls')|$(json "$tmp/show.json" '$.step.phases[1].mechanism')" \
    "1.25|misc|transfer|0.3|40|reshard p2p" "--json: the step and its phases with every field"
"$REFIT" show 1 --db "$sdb" --json >"$tmp/show.json"
is "$(json "$tmp/show.json" '$.step')|$(json "$tmp/show.json" '$.prediction.seconds' |
    grep -c .)" "|1" "--json of a profile-free run: a prediction and no step key"
is "$(sql "$sdb" "SELECT framework, phase, printf('%.4f', share_of_step) FROM run_phases
                  WHERE run_id = 3 AND part = 'misc'")" "nemo-rl|transfer|0.3000" \
    "view run_phases: the framework from the stored scenario, the phase's share of the step"
"$REFIT" diff 2 3 --db "$sdb" >"$tmp/diff.txt"
is "$(sed -n '/^step:/,$p' "$tmp/diff.txt")" "step:
  step_s                   3.5 -> 1.25  (x0.357)
  all.export_s             0.5 -> -
  all.transfer_s           2 -> -
  all.load_s               0.75 -> -
  all.finalize_s           0.25 -> 0.25  (same)
  bulk.export_s            - -> 0.125
  bulk.transfer_s          - -> 0.5
  bulk.load_s              - -> 0.25
  misc.transfer_s          - -> 0.375" "diff: the steps, phases matched by part and phase"
"$REFIT" diff 1 2 --db "$sdb" --json >"$tmp/diff.json"
is "$(json "$tmp/diff.json" '$.step.seconds.a')|$(json "$tmp/diff.json" \
    '$.step.seconds.b')|$(json "$tmp/diff.json" '$.step.phases[1].phase')|$(json \
    "$tmp/diff.json" '$.step.phases[1].b')" "|3.5|transfer|2.0" \
    "diff --json against a profile-free run: its side null"
"$REFIT" diff 1 1 --db "$sdb" >"$tmp/diff.txt"
is "$(grep -c '^step' "$tmp/diff.txt")" 0 "two profile-free runs: no step section"

# Command line.
"$REFIT" show 9 --db "$db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: no run 9 in $db" "show: a run that does not exist"
"$REFIT" show x --db "$db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "2 refit: RUN x: expected a run id (a positive integer) (see refit show \
--help)" "show: a run id that is not one"
"$REFIT" diff 1 --db "$db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "2 refit: diff takes two RUNs, got 1 (see refit diff --help)" \
    "diff: needs two runs"
"$REFIT" show 1 --db "$tmp/missing.db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/missing.db: no such file" "show: no such database"
"$REFIT" show --help >"$tmp/out"
is "$? $(head -1 "$tmp/out")" "0 usage: refit show RUN [--db FILE] [--json]" "show --help"
done_testing
