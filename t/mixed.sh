#!/bin/sh
# End to end: mixed clusters (models/lib/cluster.lua cluster.load_mixed). An H100 trainer
# refitting H200 or B200 engines plans, fits, simulates and replays: each side's GPUs have
# their own preset's memory, NVLink, NICs and copy rates, one fabric joins them; a layout
# that does not fit on H100 fits on the H200 part; the step's trainer work runs at H100's
# rates and the engine's load at H200's; refit-exec replays the plan with every byte
# verified; a cluster whose parts cannot be joined is refused at its file, line and field.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/mixed
db=$tmp/mixed.db
model=$(cd "$SRCDIR/t/data/exec" && pwd)/tiny-llama.lua
# ph JSON PHASE: the seconds of the part "all" phase of a `refit sim --json` document.
ph() {
    "$SQLITE3" :memory: "SELECT json_extract(p.value, '\$.seconds') FROM
        json_each(json_extract(readfile('$1'), '\$.step.phases')) AS p
        WHERE json_extract(p.value, '\$.phase') = '$2'"
}

"$REFIT" plan "$data/tiny-h200.lua" --db "$db" >"$tmp/out" 2>&1
ok $? "refit plan tiny-h200.lua (dgx-h100 trainer, dgx-h200 engines): run 1"
"$REFIT" show 1 --db "$db" >"$tmp/show"
grep -q '^  cluster    dgx-h100+dgx-h200 (.*dgx-h100.lua): 2 nodes x 8 GPUs, 80 GB HBM' "$tmp/show"
ok $? "refit show names both parts and the cluster's two nodes"
grep -q '^             nodes 1.. are dgx-h200 (.*dgx-h200.lua): 141 GB HBM, NVLink 450 GB/s, NIC 50 GB/s, copy 1920 GB/s, quantisation 1920 GB/s$' "$tmp/show"
ok $? "refit show prints the infer part's first node and rates"
grep -q 'infer: GPU 8 (stage 0) needs 0.0 GB of 126.9 ' "$tmp/show"
ok $? "the engines' memory is H200's: 0.9 x 141 GB"
grep -q 'train: GPU [0-7] (stage [01]) needs 0.0 GB of 80.0 ' "$tmp/show"
ok $? "the trainer's memory is H100's: 80 GB"
is "$(grep -c '^  overrides' "$tmp/show") $(grep '^  overrides' "$tmp/show")" \
    "1   overrides  cluster.nodes 2 (preset 1)" "the joined name is not an override; the node count is"
is "$(sql "$db" "SELECT min(dst_gpu) || '-' || max(dst_gpu + (dst_count - 1) * dst_stride) || ' '
        || max(src_gpu) FROM transfer WHERE phase = 'deliver'")" "8-15 7" \
    "the plan delivers from GPUs 0-7 (the train part) into GPUs 8-15 (the infer part)"
replay_checked "$db" 1 16 "the mixed cluster's plan"

"$REFIT" sim "$data/tiny-b200.lua" --db "$db" >"$tmp/out" 2>&1
ok $? "refit sim tiny-b200.lua (dgx-h100 trainer, 2 dgx-b200 nodes): run 2"
# NVLink at the efficiency of the train part's calibration (0.82): 450 and 900 GB/s.
is "$(sql "$db" "SELECT group_concat(DISTINCT capacity_gbps) FROM link_load WHERE run_id = 2
        AND kind = 'nvl_out' AND endpoint_a < 8")" 369.0 "H100 GPUs send at 0.82 x 450 GB/s"
is "$(sql "$db" "SELECT group_concat(DISTINCT capacity_gbps) FROM link_load WHERE run_id = 2
        AND kind = 'nvl_in' AND endpoint_a >= 8")" 738.0 "B200 GPUs receive at 0.82 x 900 GB/s"
is "$(sql "$db" "SELECT json_extract(scenario_json, '\$.cluster.nodes') || ' ' ||
        json_extract(scenario_json, '\$.cluster.upper.first_node') || ' ' ||
        json_extract(scenario_json, '\$.cluster.upper.name') FROM run WHERE id = 2")" \
    "3 1 dgx-b200" "the infer part's nodes as given: 1 + 2 nodes, dgx-b200 from node 1"

# A layout only the H200 part holds.
"$REFIT" sim "$data/dsv3-h100.lua" --db "$db" >"$tmp/out" 2>&1
is "$? $(grep -c 'infer: the layout does not fit: GPU 256 (stage 0) needs 88.3 GB of 72.0' "$tmp/out")" \
    "1 1" "DeepSeek-V3 FP8 TP8 engines do not fit on H100"
"$REFIT" sim "$data/dsv3-h200.lua" --db "$db" >"$tmp/out" 2>&1
ok $? "on the H200 part beside the H100 trainer they do"
grep -q 'infer: GPU 256 (stage 0) needs 88.3 GB of 126.9 ' "$tmp/out"
ok $? "88.3 GB of 126.9 on the engines' H200"

# The sides from NeMo RL's YAML: the trainer's device work at H100's rates, the engine's
# load (its FP8 quantisation) at H200's.
for c in h100 h200 h200-only; do
    "$REFIT" sim "$data/nemo-rl-$c.lua" --db "$db" --json >"$tmp/$c.json" 2>"$tmp/err"
    ok $? "refit sim nemo-rl-$c.lua"
done
is "$(ph "$tmp/h200.json" export)" "$(ph "$tmp/h100.json" export)" \
    "mixed: the export takes what it takes on H100 alone"
is "$(ph "$tmp/h200.json" load)" "$(ph "$tmp/h200-only.json" load)" \
    "mixed: the load takes what it takes on H200 alone"
awk -v a="$(ph "$tmp/h200.json" load)" -v b="$(ph "$tmp/h100.json" load)" 'BEGIN { exit !(a < b) }'
ok $? "and less than on H100 (faster quantisation)"

# Clusters that cannot be joined, each refused at the scenario's line and field.
bad() { # bad CLUSTER [INFER_EXTRA]: a scenario with that cluster table on line 3
    printf 'return {\n    model = "%s", train = { gpus = 8, tp = 2 },\n    cluster = %s,\n    infer = { gpus = 8, tp = 4%s },\n}\n' \
        "$model" "$1" "${2:-}" >"$tmp/bad.lua"
    "$REFIT" sim "$tmp/bad.lua" --db "$tmp/bad.db" 2>&1 | head -1
}
is "$(bad '{ train = "dgx-h100", infer = "gb200-nvl72" }')" "refit: $tmp/bad.lua:3: \
cluster.infer.system: gb200-nvl72 has gpus_per_node = 4, dgx-h100 8: a mixed cluster's parts \
share one node shape (GPUs and NICs per node, NVLink domain)" "parts of two node shapes"
is "$(bad '{ train = "dgx-h100", infer = { system = "dgx-h200", fabric = { oversubscription = 2 } } }')" \
    "refit: $tmp/bad.lua:3: cluster.infer.fabric: one fabric and one set of NCCL and framework \
constants serve both parts: set cluster.train.fabric" "the infer part's fabric is refused, not dropped"
is "$(bad '{ train = "dgx-h100", infer = { system = "dgx-h200", calibration = { streams = 4 } } }')" \
    "refit: $tmp/bad.lua:3: cluster.infer.calibration.streams: one fabric and one set of NCCL and \
framework constants serve both parts: set cluster.train.calibration.streams" \
    "so is a constant the parts share"
is "$(bad '{ train = "dgx-h100", infer = "dgx-h200", nodes = 4 }')" "refit: $tmp/bad.lua:3: \
cluster.nodes: a mixed cluster sets its fields per part: cluster.train.nodes (the trainer's \
nodes) or cluster.infer.nodes" "a field beside the parts"
is "$(bad '{ train = "dgx-h100" }')" "refit: $tmp/bad.lua:3: cluster.infer: missing (a mixed \
cluster names a preset for each side: { train = 'dgx-h100', infer = 'dgx-h200' })" "one part"
is "$(bad '{ train = "dgx-h100", infer = "dgx-h200" }' ', first_gpu = 4')" "refit: $tmp/bad.lua:4: \
infer.first_gpu: 4 is a GPU of the train part (dgx-h100, GPUs 0..7); the inference side starts \
at or after GPU 8, the infer part's first (dgx-h200)" "engines on the trainer's part"
is "$(bad '{ train = { system = "gb200-nvl72", nodes = 1 }, infer = "gb300-nvl72" }')" \
    "refit: $tmp/bad.lua:3: cluster.train.nodes: 1 nodes of 4 GPUs end inside an NVLink domain \
of 72 GPUs: a mixed cluster's parts are whole domains" "a boundary inside an NVLink domain"
done_testing
