#!/bin/sh
# End to end: colocated refit under a framework profile (sim/step.c colocated_part). verl's
# hybrid engine (FSDP) and NeMo RL's colocated IPC path (Megatron) each predict a step with
# its phases: the optimizer and weights moved between host and GPU around it, the export's
# gathers, the IPC copy, the engine's load. Where each GPU's shards are local the plan moves
# no byte between GPUs, over a NIC least of all, and refit-exec verifies every byte of it. A
# colocated scenario under a profile without a colocated path is refused, never planned as
# the non-colocated one.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/colocated
db=$tmp/colo.db
# The refused variants are written under $tmp: their model path made absolute.
model=$(cd "$SRCDIR/t/data/exec" && pwd)/tiny-llama.lua
variant() { sed -e "s|\.\./exec/tiny-llama.lua|$model|" -e "$2" "$data/$1"; }
# ph JSON PHASE FIELD: one field of the part "all" phase of a `refit sim --json` document.
ph() {
    "$SQLITE3" :memory: "SELECT json_extract(p.value, '\$.$3') FROM
        json_each(json_extract(readfile('$1'), '\$.step.phases')) AS p
        WHERE json_extract(p.value, '\$.phase') = '$2'"
}
phases() {
    "$SQLITE3" :memory: "SELECT group_concat(json_extract(value, '\$.part') || '.' ||
        json_extract(value, '\$.phase'), ' ') FROM json_each(json_extract(readfile('$1'),
        '\$.step.phases'))"
}
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-12) }'; }

# verl: FSDP actor and vLLM TP2 rollout on the same 8 GPUs.
"$REFIT" sim "$data/verl.lua" --db "$db" --json >"$tmp/v.json"
ok $? "refit sim verl.lua (colocated under verl): run 1"
is "$(json "$tmp/v.json" '$.strategy')" "reshard" "planned as reshard (what refit-exec replays)"
is "$(phases "$tmp/v.json")" \
    "all.prepare all.export all.transfer all.load all.resume all.finalize" \
    "its step: prepare, export, transfer, load, resume, finalize"
# prepare: rollout.resume(tags=["weights"]) brings the engine's weights back at 57 GB/s.
w=$(sql "$db" "SELECT weights_bytes FROM memory WHERE run_id = 1 AND side = 'infer'")
near "$(ph "$tmp/v.json" prepare seconds)" "$(awk -v b="$w" 'BEGIN { printf "%.17g", b / 57e9 }')"
ok $? "prepare = the engine's $w weight bytes / h2d_gbps (57)"
case "$(ph "$tmp/v.json" export mechanism)" in
"FSDP full_tensor() on every GPU: 39 collectives"*) r=0 ;; *) r=1 ;;
esac
ok $r "export: FSDP's full_tensor(), one all-gather per parameter (39)"
case "$(ph "$tmp/v.json" transfer mechanism)" in
*"CUDA IPC on each GPU"*"; no NIC") r=0 ;; *) r=1 ;;
esac
ok $r "transfer: the IPC copy on each GPU, no NIC"
case "$(ph "$tmp/v.json" load mechanism)" in
*"clone out of the IPC buffer"*) r=0 ;; *) r=1 ;;
esac
ok $r "load: the engine clones out of the IPC buffer (verl)"
case "$(json "$tmp/v.json" '$.step.composition')" in
*"the engine clones a bucket and ACKs, so its load overlaps the next bucket's export"*) r=0 ;;
*) r=1 ;;
esac
ok $r "composition: one buffer, the load overlaps the next fill after the clone's ACK"
is "$(json "$tmp/v.json" '$.step.seconds')" "$(json "$tmp/v.json" '$.predicted_s')" \
    "the prediction is the step"
is "$(sql "$db" "SELECT count(*) FROM predicted_step_phase WHERE run_id = 1 AND phase IN
    ('prepare', 'resume')")" 2 "the store keeps prepare and resume (schema 12)"

# NeMo RL: Megatron TP2 and vLLM TP2 on the same 16 GPUs of two nodes: every shard is local.
"$REFIT" sim "$data/nemo-rl.lua" --db "$db" --json >"$tmp/n.json"
ok $? "refit sim nemo-rl.lua (colocated under NeMo RL): run 2"
is "$(phases "$tmp/n.json")" \
    "all.prepare all.export all.transfer all.load all.resume all.finalize" \
    "its step has the same phases"
o=$(sql "$db" "SELECT optimizer_bytes FROM memory WHERE run_id = 2 AND side = 'train'")
t=$(sql "$db" "SELECT weights_bytes FROM memory WHERE run_id = 2 AND side = 'train'")
near "$(ph "$tmp/n.json" prepare seconds)" \
    "$(awk -v o="$o" -v w="$w" 'BEGIN { printf "%.17g", o / 52.8e9 + w / 57e9 }')"
ok $? "prepare = optimizer $o B / d2h_gbps (52.8) + the engine's weights / h2d_gbps (57)"
near "$(ph "$tmp/n.json" resume seconds)" "$(awk -v w="$t" 'BEGIN { printf "%.17g", w / 52.8e9 }')"
ok $? "resume = the training weights $t B / d2h_gbps: NeMo RL offloads the model"
case "$(json "$tmp/n.json" '$.step.composition')" in
*"2 IPC buffers"*"(nemo_rl/models/policy/utils.py, stream_weights_via_ipc_zmq_impl)") r=0 ;;
*) r=1 ;;
esac
ok $r "composition: two ping-pong buffers overlap, citing the code that allows it"
"$REFIT" show 2 --db "$db" >"$tmp/show"
grep -q "^  step .*2 IPC buffers: export, copy and load of 1 bucket(s) overlap.*, as 2 ping-pong \
buffers" "$tmp/show"
ok $? "refit show prints which phases overlap and why"
is "$(sql "$db" "SELECT coalesce(sum(bytes), 0) FROM link_load WHERE run_id = 2 AND kind IN
    ('nic_out', 'nic_in', 'leaf_up', 'leaf_down', 'nvl_out', 'nvl_in')")" 0 \
    "every shard is local: no byte on a NIC, a leaf or NVLink"
is "$(sql "$db" "SELECT sum(sent_bytes), sum(local_bytes) > 0 FROM gpu_traffic WHERE run_id = 2")" \
    "0|1" "each GPU copies its own shard and sends nothing"

replay_checked "$db" 2 16 "the colocated run"

# Refusals: never the non-colocated path in silence.
variant verl.lua 's/framework = "verl"/framework = "slime"/' >"$tmp/slime.lua"
"$REFIT" sim "$tmp/slime.lua" --db "$db" 2>"$tmp/err" >/dev/null
is "$? $(cat "$tmp/err")" "1 refit: $tmp/slime.lua:8: framework: the sides are colocated (GPUs \
0-7), but profile slime has no colocated section: it models only the framework's \
non-colocated path" "a profile without a colocated path is refused on colocated sides"
variant verl.lua 's/first_gpu = 0, tp = 2/first_gpu = 4, tp = 2/; s/nodes = 1/nodes = 2/' \
    >"$tmp/part.lua"
"$REFIT" sim "$tmp/part.lua" --db "$db" 2>"$tmp/err" >/dev/null
is "$? $(cat "$tmp/err")" "1 refit: $tmp/part.lua:7: infer.first_gpu: train (GPUs 0-7) and \
infer (GPUs 4-11) overlap in part; under a framework profile the sides are either colocated \
(the same GPUs) or apart" "sides that overlap in part are refused"
variant verl.lua 's/framework = "verl",/framework = "verl", strategy = "broadcast",/' \
    >"$tmp/bc.lua"
"$REFIT" sim "$tmp/bc.lua" --db "$db" 2>"$tmp/err" >/dev/null
is "$? $(cat "$tmp/err")" "1 refit: $tmp/bc.lua:8: strategy: broadcast on colocated sides: \
under profile verl the refit is its colocated IPC path, which refit plans as reshard" \
    "another strategy on colocated sides is refused"
variant verl.lua 's/train = { gpus = 8, fsdp = true }/train = { gpus = 8, tp = 2 }/' \
    >"$tmp/mg.lua"
"$REFIT" sim "$tmp/mg.lua" --db "$db" 2>"$tmp/err" >/dev/null
is "$? $(cat "$tmp/err")" "1 refit: $tmp/mg.lua:8: framework: profile verl exports with \
FSDP's full_tensor() on colocated sides, but the training side is Megatron (not FSDP); set \
framework = { profile = 'verl', colocated = { export = 'export' } }" \
    "verl on a Megatron actor says how to switch the export"
sed "s/framework = \"verl\"/framework = { profile = 'verl', colocated = { export = 'export' } }/" \
    "$tmp/mg.lua" >"$tmp/mg2.lua"
"$REFIT" sim "$tmp/mg2.lua" --db "$db" --json >"$tmp/mg2.json" 2>"$tmp/err"
ok $? "and with the override it runs: run 3"
case "$(ph "$tmp/mg2.json" export mechanism)" in
"Bridge export on every GPU"*) r=0 ;; *) r=1 ;;
esac
ok $r "through Megatron-Bridge's export"
is "$(sql "$db" "SELECT count(*) FROM run")" 3 "the refused scenarios stored nothing"
done_testing
