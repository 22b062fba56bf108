#!/bin/sh
# End to end: the refit step as a framework profile runs it (sim/step.c). Under
# framework = "nemo-rl" refit sim predicts export, transfer, load and finalize; each phase
# is checked against its mechanism by hand (tensor_overhead_us per HF tensor, memcpy_gbps
# per byte), their composition against NeMo RL's buffering, and the stored rows against
# the JSON. A profile-free run has no step. The four NeMo RL layouts' hybrid speedups fall
# in NeMo RL's published 2.7x-5.7x band (20% margin), and the profile's plan replays.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/framework
db=$tmp/step.db
# ph JSON PART PHASE FIELD: one field of one phase of a `refit sim --json` document.
ph() {
    "$SQLITE3" :memory: "SELECT json_extract(p.value, '\$.$4') FROM
        json_each(json_extract(readfile('$1'), '\$.step.phases')) AS p
        WHERE json_extract(p.value, '\$.part') = '$2' AND json_extract(p.value, '\$.phase') = '$3'"
}
# near A B: |A - B| <= 1e-12 (exits 0), as awk computes it.
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-12) }'; }

"$REFIT" sim "$data/nemo-rl.lua" --db "$db" --json >"$tmp/b.json"
ok $? "refit sim nemo-rl.lua (broadcast under NeMo RL): run 1"
is "$("$SQLITE3" :memory: "SELECT group_concat(json_extract(value, '\$.part') || '.' ||
    json_extract(value, '\$.phase'), ' ') FROM json_each(json_extract(readfile('$tmp/b.json'),
    '\$.step.phases'))")" "all.export all.transfer all.load all.finalize" \
    "the broadcast step's phases, in the order they run"
# The engine's load: one loader call per HF tensor on the host (10 us each on dgx-h100) beside
# one stream-ordered copy of the GPU's shard at memcpy_gbps (1340): the longer of the two.
calls=$(ph "$tmp/b.json" all load calls)
bytes=$(ph "$tmp/b.json" all load bytes)
want=$(awk -v c="$calls" -v b="$bytes" 'BEGIN { h = c * 10e-6; d = b / 1340e9;
    printf "%.17g", (h > d ? h : d) }')
near "$(ph "$tmp/b.json" all load seconds)" "$want"
ok $? "load = max($calls HF tensors x 10 us on the host, $bytes B / 1340 GB/s on the device)"
# The export: 3.5 us an NCCL call and 10 us a conversion call on the host, beside the
# collectives on the device, and the first call's launch before the device starts.
gc=$(( $(ph "$tmp/b.json" all export calls) - calls ))
case "$(ph "$tmp/b.json" all export mechanism)" in
*"host $(awk -v g="$gc" -v c="$calls" 'BEGIN { printf "%.3g", g * 3.5e-6 + c * 10e-6 }') s"*) r=0 ;;
*) r=1 ;;
esac
ok $r "export's host time = $gc NCCL calls x 3.5 us + $calls conversion calls x 10 us"
is "$calls|$(json "$tmp/b.json" '$.transfers')" "39|69" \
    "39 HF tensors loaded (tiny Llama's), its 69 gathers kept in the plan for refit-exec"
# One bucket (8.7 MB of a 1.6 GB bucket): nothing to overlap, the step is the phases' sum.
sum=$("$SQLITE3" :memory: "SELECT sum(json_extract(value, '\$.seconds')) FROM
    json_each(json_extract(readfile('$tmp/b.json'), '\$.step.phases'))")
near "$(json "$tmp/b.json" '$.step.seconds')" "$sum"
ok $? "one bucket: the step is export + transfer + load + finalize"
near "$(json "$tmp/b.json" '$.predicted_s')" "$(json "$tmp/b.json" '$.step.seconds')"
ok $? "the prediction is the whole step"
is "$(json "$tmp/b.json" '$.step.composition')" \
    "2 buffers: export, wire and load of 1 buckets overlap (a 3-stage pipeline), as \
NRL_REFIT_NUM_BUFFERS 2 streams; torch.cat then one broadcast per bucket (l.82-118) \
(nemo_rl/utils/packed_tensor.py, packed_broadcast_producer)" \
    "the composition names NeMo RL's two buffers and cites the code that overlaps them"
case "$(ph "$tmp/b.json" all transfer mechanism)" in
"NCCL broadcast over 16 ranks on 16 channels, one per bucket") r=0 ;; *) r=1 ;; esac
ok $r "the broadcast runs over every training and inference rank: 2 full nodes, 16 channels"
is "$(sql "$db" "SELECT count(*), round(sum(seconds), 12) = round((SELECT step_seconds FROM
    prediction WHERE run_id = 1), 12) FROM predicted_step_phase WHERE run_id = 1")" "4|1" \
    "stored: 4 phase rows that add up to prediction.step_seconds"
is "$(sql "$db" "SELECT DISTINCT framework FROM run_phases WHERE run_id = 1")" "nemo-rl" \
    "run_phases names the framework"

# The profile's plan replays: the broadcast over all 16 ranks, every inference byte checked.
replay_checked "$db" 1 16 "run 1"

"$REFIT" sim "$data/nemo-rl.lua" --db "$db" --strategy hybrid --json >"$tmp/h.json"
ok $? "refit sim nemo-rl.lua --strategy hybrid: run 2"
is "$("$SQLITE3" :memory: "SELECT group_concat(json_extract(value, '\$.part') || '.' ||
    json_extract(value, '\$.phase'), ' ') FROM json_each(json_extract(readfile('$tmp/h.json'),
    '\$.step.phases'))")" \
    "bulk.export bulk.transfer bulk.load misc.export misc.transfer misc.load all.finalize" \
    "hybrid: the bulk (nccl_reshard), then the misc broadcast, then finalize"
sum=$("$SQLITE3" :memory: "SELECT sum(json_extract(value, '\$.seconds')) FROM
    json_each(json_extract(readfile('$tmp/h.json'), '\$.step.phases'))")
near "$(json "$tmp/h.json" '$.step.seconds')" "$sum"
ok $? "misc after bulk, one misc bucket: the step is the sum of its phases"
case "$(ph "$tmp/h.json" bulk load mechanism)" in
"fused gate/up land in a temporary, copied in (one HBM copy)") r=0 ;; *) r=1 ;; esac
ok $r "the engine copies fused gate/up through a temporary"
# M2N's kernel per bulk call: a barrier at its start and one at its end (16.7 us each), one
# call after another on the device.
k=$(ph "$tmp/h.json" bulk transfer calls)
case "$(ph "$tmp/h.json" bulk transfer mechanism)" in
*"; $k kernels x 2 barriers $(awk -v k="$k" 'BEGIN { printf "%.3g", k * 2 * 16.7e-6 }') s") r=0 ;;
*) r=1 ;;
esac
ok $r "the bulk's $k M2N calls each pay 2 barriers of barrier_us (16.7 us)"

# SGLang's loader (slime) scans its expert mapping per tensor: 3 x (128 + 1) entries for
# Qwen3-30B-A3B, 0.0479 us an entry (sgl-project/sglang PR #19299).
"$REFIT" sim "$data/slime-moe.lua" --db "$tmp/slime.db" --json >"$tmp/sl.json"
ok $? "refit sim slime-moe.lua (broadcast under slime)"
hf=$(ph "$tmp/sl.json" all load calls)
case "$(ph "$tmp/sl.json" all load mechanism)" in
"sglang loader: $hf HF tensors x 1 calls, SGLang scans 387 mapping entries a tensor \
$(awk -v h="$hf" 'BEGIN { printf "%.3g", h * 387 * 0.0479e-6 }') s"*) r=0 ;;
*) r=1 ;;
esac
ok $r "the load scans 387 mapping entries for each of $hf tensors"

# miles' P2P path (strategy p2p, planned as reshard): 4 senders a stage, engines of 8 GPUs, so each sender
# runs SGLang's loader on a CPU replica for 2 target ranks and waits for the first's writes.
"$REFIT" sim "$data/miles-p2p.lua" --db "$tmp/p2p.db" --json >"$tmp/p.json"
ok $? "refit sim miles-p2p.lua (miles' P2P path)"
is "$("$SQLITE3" :memory: "SELECT group_concat(json_extract(value, '\$.part') || '.' ||
    json_extract(value, '\$.phase'), ' ') FROM json_each(json_extract(readfile('$tmp/p.json'),
    '\$.step.phases'))")" "all.prepare all.export all.transfer all.load all.finalize" \
    "P2P: prepare, export (gathers, CPU loads, D2H), the writes, no receiver load, finalize"
hf=$(ph "$tmp/p.json" all export mechanism | sed 's/ HF tensors.*//')
case "$(ph "$tmp/p.json" all export mechanism)" in
*"CPU loader x 2 rank(s) $(awk -v h="$hf" 'BEGIN { printf "%.3g", 2 * h * 10e-6 }') s;"*) r=0 ;;
*) r=1 ;;
esac
ok $r "each sender loads 2 target ranks' replicas: 2 x $hf tensors x 10 us"
near "$(json "$tmp/p.json" '$.step.seconds')" \
    "$(awk -v e="$(ph "$tmp/p.json" all export seconds)" -v w="$(ph "$tmp/p.json" all transfer seconds)" \
    'BEGIN { printf "%.17g", e + w }')"
ok $? "one bucket: the step is the sender's work, then its writes"
is "$(ph "$tmp/p.json" all prepare seconds)" 0.0 "a steady refit registers nothing"
# The stored profile reads back whole: calibrate re-predicts the P2P step from the run's
# description to the last digits (a log measurement of exactly the stored step).
"$REFIT" measure 1 --db "$tmp/p2p.db" --seconds "$(json "$tmp/p.json" '$.step.seconds')" \
    >/dev/null
"$REFIT" calibrate --db "$tmp/p2p.db" --cluster dgx-h100 --out "$tmp/cal.lua" --json \
    >"$tmp/cal.json"
awk -v r="$(json "$tmp/cal.json" '$.rms_before')" 'BEGIN { exit !(r < 1e-9) }'
ok $? "calibrate re-predicts the P2P step from its stored profile (rms $(json "$tmp/cal.json" '$.rms_before'))"
sed "s|framework = \"miles\",|framework = \"miles\", refit = \"first\",|; \
    s|\.\./exec/tiny-llama.lua|$(cd "$SRCDIR/t/data/exec" && pwd)/tiny-llama.lua|" \
    "$data/miles-p2p.lua" >"$tmp/first.lua"
"$REFIT" sim "$tmp/first.lua" --db "$tmp/p2p.db" --json >"$tmp/pf.json"
ok $? "refit = \"first\" under miles"
regions=$(ph "$tmp/pf.json" all prepare calls)
near "$(ph "$tmp/pf.json" all prepare seconds)" \
    "$(awk -v n="$regions" 'BEGIN { printf "%.17g", n * 1897e-6 }')"
ok $? "a first refit registers the CPU replica's $regions parameters at reg_region_us (1.9 ms)"
sed 's|framework = "miles",|refit = "first",|; s|strategy = "p2p"|strategy = "reshard"|' \
    "$tmp/first.lua" >"$tmp/nofw.lua"
"$REFIT" sim "$tmp/nofw.lua" --db "$tmp/p2p.db" 2>"$tmp/err" >/dev/null
is "$? $(cat "$tmp/err")" "1 refit: $tmp/nofw.lua:9: refit: 'first' needs a framework profile: \
refit's own plans set nothing up per job" "refit = \"first\" without a profile is refused"

# A miles P2P run stored before the p2p section (its fields under reshard, strategy reshard)
# reads back as the same path: calibrate re-predicts it from the older form of the document.
"$SQLITE3" "$tmp/p2p.db" "UPDATE run SET scenario_json = json_remove(json_set(scenario_json,
    '\$.framework.reshard', json_object('plan', 'reshard', 'stage_groups', 0,
    'misc_after_bulk', json('false'), 'stack_experts', json('false'), 'fused_copy',
    json('false'), 'calls', 1.0, 'gather', 'stage', 'cpu_loader', json('true'),
    'wait_nonlast', json('true'), 'register', 'replica_params'),
    '\$.framework.strategies', json('[\"broadcast\", \"reshard\"]')), '\$.framework.p2p')
    WHERE id = 1"
"$REFIT" calibrate --db "$tmp/p2p.db" --cluster dgx-h100 --out "$tmp/cal2.lua" --json \
    >"$tmp/cal2.json"
awk -v r="$(json "$tmp/cal2.json" '$.rms_before')" 'BEGIN { exit !(r < 1e-9) }'
ok $? "a P2P run stored in the older form (reshard.cpu_loader) re-predicts the same step"

# NeMo RL's NIXL path (strategy p2p): every vLLM rank reads each dense tensor whole and its TP
# slice of the experts (4 ranks a TP4 engine), bucket by bucket from its paired policy rank.
"$REFIT" sim "$data/nemo-rl-nixl.lua" --db "$tmp/nixl.db" --json >"$tmp/n.json"
ok $? "refit sim nemo-rl-nixl.lua (NeMo RL's NIXL path)"
is "$(json "$tmp/n.json" '$.strategy') $("$SQLITE3" :memory: "SELECT group_concat(
    json_extract(value, '\$.part') || '.' || json_extract(value, '\$.phase'), ' ') FROM
    json_each(json_extract(readfile('$tmp/n.json'), '\$.step.phases'))")" \
    "reshard all.prepare all.export all.transfer all.load all.finalize" \
    "NIXL: planned as reshard; prepare, export, the reads, the load, finalize"
is "$(ph "$tmp/n.json" all transfer bytes)" "$(sql "$tmp/nixl.db" "SELECT sum(CASE WHEN role =
    'expert' THEN wire_bytes / 4 ELSE wire_bytes END) FROM tensor WHERE run_id = 1")" \
    "a rollout rank reads every dense tensor whole and a quarter of each expert tensor"
awk -v got="$(ph "$tmp/n.json" all transfer bytes)" -v shard="$(sql "$tmp/nixl.db" \
    "SELECT received_bytes FROM gpu_traffic WHERE run_id = 1 AND gpu = 8")" \
    'BEGIN { exit !(got > shard) }'
ok $? "more than the plan's shard (dense tensors whole): the step charges what NIXL moves"
n_b=$(ph "$tmp/n.json" all transfer calls)
near "$(json "$tmp/n.json" '$.step.seconds')" "$(awk -v n="$n_b" \
    -v e="$(ph "$tmp/n.json" all export seconds)" -v w="$(ph "$tmp/n.json" all transfer seconds)" \
    -v l="$(ph "$tmp/n.json" all load seconds)" 'BEGIN { a = e; b = w + l;
    m = a > b ? a : b; printf "%.17g", m * (n - 1) / n + (a + b) / n }')"
ok $? "$n_b buckets: the sender one bucket ahead of the receiver's read and load"
case "$(json "$tmp/n.json" '$.step.composition')" in
*"as two registered buckets; the sender packs the next once NIXL notifies"*) r=0 ;;
*) r=1 ;;
esac
ok $r "the overlap cites the notification it waits on (nixl.py send_weights, flush_bucket)"
sed "s|strategy = \"p2p\",|strategy = \"p2p\", refit = \"first\",|; \
    s|\.\./exec/tiny-qwen3-moe.lua|$(cd "$SRCDIR/t/data/exec" && pwd)/tiny-qwen3-moe.lua|" \
    "$data/nemo-rl-nixl.lua" >"$tmp/nixl-first.lua"
"$REFIT" sim "$tmp/nixl-first.lua" --db "$tmp/nixl.db" --json >"$tmp/nf.json"
is "$(ph "$tmp/nf.json" all prepare calls) $(ph "$tmp/nf.json" all prepare seconds)" \
    "2 0.003794" "a first refit registers the worker's two buckets (2 x 1.897 ms)"
case "$("$REFIT" show 1 --db "$tmp/nixl.db" | head -n 1)" in
"run 1: tiny-qwen3-moe, strategy reshard (the framework's p2p path), stored "*) r=0 ;;
*) r=1 ;;
esac
ok $r "refit show names the path beside the plan's strategy"
replay_checked "$tmp/nixl.db" 1 16 "the NIXL run's plan"

# checkpoint-engine: its P2P mode is broadcast mode with the owners' H2D copies turned into
# remote reads (one reader per NIC) and the read buffer registered at every update.
"$REFIT" sim "$data/ce-p2p.lua" --db "$tmp/ce.db" --json >"$tmp/cp.json"
ok $? "refit sim ce-p2p.lua (checkpoint-engine's P2P mode)"
"$REFIT" sim "$data/ce-p2p.lua" --strategy broadcast --db "$tmp/ce.db" --json >"$tmp/cb.json"
is "$(json "$tmp/cp.json" '$.strategy') $(ph "$tmp/cp.json" all transfer seconds)" \
    "broadcast $(ph "$tmp/cb.json" all transfer seconds)" \
    "the P2P mode broadcasts as broadcast mode does, on the same plan"
case "$(ph "$tmp/cp.json" all export mechanism)" in
"RDMA reads from the owners' pinned memory"*) r=0 ;;
*) r=1 ;;
esac
ok $r "its export reads from the owners' pinned memory"
is "$(ph "$tmp/cp.json" all prepare seconds) $(ph "$tmp/cb.json" all prepare seconds)" \
    "0.001897 " "a steady refit still registers the read buffer (1.897 ms); broadcast mode none"
awk -v p="$(json "$tmp/cp.json" '$.step.seconds')" -v b="$(json "$tmp/cb.json" '$.step.seconds')" \
    'BEGIN { exit !(p > b) }'
ok $? "P2P mode takes longer than broadcast mode, as checkpoint-engine's README measures"

# Perplexity: FSDP trainers write into the engines' weights, the dense tensors, then the
# experts; each group's export and writes overlap.
"$REFIT" sim "$data/perplexity.lua" --db "$tmp/px.db" --json >"$tmp/px.json"
ok $? "refit sim perplexity.lua (Perplexity's schedule)"
is "$("$SQLITE3" :memory: "SELECT group_concat(json_extract(value, '\$.part') || '.' ||
    json_extract(value, '\$.phase'), ' ') FROM json_each(json_extract(readfile('$tmp/px.json'),
    '\$.step.phases'))")" \
    "all.prepare misc.export misc.transfer misc.load bulk.export bulk.transfer bulk.load all.finalize" \
    "Perplexity: the dense group (misc), then the experts (bulk)"
is "$(ph "$tmp/px.json" misc load seconds) $(ph "$tmp/px.json" bulk load seconds)" "0.0 0.0" \
    "written into the engines' weights: nothing to load"
near "$(json "$tmp/px.json" '$.step.seconds')" "$(awk \
    -v e1="$(ph "$tmp/px.json" misc export seconds)" -v w1="$(ph "$tmp/px.json" misc transfer seconds)" \
    -v e2="$(ph "$tmp/px.json" bulk export seconds)" -v w2="$(ph "$tmp/px.json" bulk transfer seconds)" \
    -v n1="$(ph "$tmp/px.json" misc transfer calls)" -v n2="$(ph "$tmp/px.json" bulk transfer calls)" \
    'function g(e, w, n) { m = e > w ? e : w; return m * (n - 1) / n + (e + w) / n }
    BEGIN { printf "%.17g", g(e1, w1, n1) + g(e2, w2, n2) }')"
ok $? "each group's export and writes overlap; the groups follow each other"

# FP8 engine: BF16 on the wire (no scale tensors), every receiver quantises whole tensors.
"$REFIT" sim "$data/nemo-rl-fp8.lua" --db "$db" --json >"$tmp/f.json"
ok $? "refit sim nemo-rl-fp8.lua: run 3"
is "$(json "$tmp/f.json" '$.payload_bytes')|$(json "$tmp/f.json" '$.collectives')" \
    "$(json "$tmp/b.json" '$.payload_bytes')|$(json "$tmp/b.json" '$.collectives')" \
    "the same BF16 bytes and collectives as the BF16 engine's run"
case "$(ph "$tmp/f.json" all load mechanism)" in
*", quantises whole tensors "*) r=0 ;; *) r=1 ;; esac
ok $r "the load phase quantises whole tensors on every receiver"

# A strategy the framework does not run is refused, and nothing is stored.
"$REFIT" sim "$data/nemo-rl.lua" --db "$db" --strategy reshard >"$tmp/out" 2>"$tmp/err"
is "$?|$(cat "$tmp/err")" "1|refit: $data/nemo-rl.lua: framework: nemo-rl does not run strategy \
reshard (its profile $REFIT_MODELS/frameworks/nemo-rl.lua lists the ones it does; drop \
\`framework\` for refit's own plan)" "reshard under nemo-rl: refused, naming the profile"
is "$(sql "$db" "SELECT count(*) FROM run")" 3 "and no run is stored for it"
"$REFIT" sim "$data/nemo-rl.lua" --db "$db" --compare >"$tmp/cmp"
ok $? "refit sim --compare under nemo-rl"
is "$(awk '$2 ~ /^(broadcast|reshard|hierarchical|hybrid|auto)$/ { print $2 }' "$tmp/cmp" |
    tr '\n' ' ')" "broadcast hybrid " \
    "--compare runs the framework's strategies only"

# A profile-free run has no step.
"$REFIT" sim "$data/plain.lua" --db "$db" --json >"$tmp/p.json"
ok $? "refit sim plain.lua (no profile)"
id=$(json "$tmp/p.json" '$.run_id')
is "$(json "$tmp/p.json" '$.step')|$(sql "$db" "SELECT count(*) FROM predicted_step_phase
    WHERE run_id = $id")|$(sql "$db" "SELECT step_seconds IS NULL FROM prediction WHERE
    run_id = $id")" "|0|1" "no step in its JSON, no phase rows, step_seconds NULL"

# The issue's target: NeMo RL's layouts, hybrid against gather-and-broadcast.
(cd "$SRCDIR/scripts" && "$REFIT" run study-nemo-rl.lua --db "$tmp/study.db") >"$tmp/study" \
    2>"$tmp/study.err"
ok $? "refit run scripts/study-nemo-rl.lua"
for layout in dsv3-h100 dsv3-gb200 qwen3-235b-h100 qwen3-235b-gb200; do
    is "$(awk -v l="$layout" '$1 == l { print $5 }' "$tmp/study")" "in" \
        "$layout: NeMo RL's hybrid speedup within 2.7x-5.7x (+-20%)"
done
done_testing
