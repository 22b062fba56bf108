#!/bin/sh
# End to end: a scenario's `update` (models/lib/update.lua). A LoRA update plans, simulates,
# stores and replays the adapters of the target layers as the model's tensors, sharded as
# vLLM shards them, while the memory fit counts the frozen base model; its faults name the
# scenario's line and field.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/update
db=$tmp/update.db

"$REFIT" sim "$data/qwen3-8b-lora.lua" --db "$db" --json >"$tmp/lora.json"
ok $? "refit sim: Qwen3-8B, LoRA rank 64 on all-linear"
# The same sides moving the full weights: the scenario without its update.
grep -v 'update = ' "$data/qwen3-8b-lora.lua" >"$tmp/qwen3-8b-full.lua"
"$REFIT" sim "$tmp/qwen3-8b-full.lua" --db "$db" --json >"$tmp/full.json"
ok $? "refit sim: the same sides moving the full weights"
# PEFT's adapters of W [out, in] are A [r, in] and B [out, r]. Qwen3-8B per layer (hidden
# 4096, q 32 x 128, k and v 8 x 128, MLP 12288): q and o 64 x 8192, k and v 64 x 5120,
# gate, up and down 64 x 16384: 4,849,664 a layer, x 36 layers.
is "$(sql "$db" "SELECT model, json_extract(scenario_json, '\$.model.params') FROM run
                 WHERE id = 1")" "qwen3-8b+lora64|174587904" \
    "the adapters' parameters: 174,587,904, as the shapes give them"
is "$(sql "$db" "SELECT json_extract(scenario_json, '\$.update') FROM run WHERE id = 1")" \
    "lora rank 64 on all-linear" "the run's description records the update"
is "$(sql "$db" "SELECT json_type(scenario_json, '\$.update') FROM run WHERE id = 2")" "" \
    "a full update's description is as it was"
# vLLM: a column-parallel layer's A whole on every rank, B split as W; a row-parallel
# layer's A split as W, B whole.
is "$(sql "$db" "SELECT group_concat(substr(name, 26) || ' ' || class, ', ') FROM (SELECT
                 name, class FROM tensor WHERE run_id = 1 AND name LIKE 'model.layers.0.%'
                 AND (name LIKE '%q_proj%' OR name LIKE '%o_proj%') ORDER BY name)")" \
    "o_proj.lora_A.weight row, o_proj.lora_B.weight replicated, q_proj.lora_A.weight replicated, q_proj.lora_B.weight column" \
    "adapters classed as vLLM shards them"
# Each GPU holds the frozen base model's shard and its adapters' (TP2: A whole and half of
# B for column layers, half of A and B whole for row layers: 120,324,096 elements, BF16).
is "$(sql "$db" "SELECT l.weights_bytes - f.weights_bytes FROM memory l, memory f
                 WHERE l.run_id = 1 AND f.run_id = 2 AND l.side = 'infer' AND
                 f.side = 'infer'")" 240648192 \
    "the memory fit counts the base model beside the adapters"
is "$(sql "$db" "SELECT l.optimizer_bytes * 20 < f.optimizer_bytes, l.grads_bytes * 20 <
                 f.grads_bytes FROM memory l, memory f WHERE l.run_id = 1 AND f.run_id = 2
                 AND l.side = 'train' AND f.side = 'train'")" "1|1" \
    "the base model is frozen: gradients and Adam state are the adapters' only"
ok "$(awk -v a="$(json "$tmp/lora.json" '$.predicted_s')" \
    -v b="$(json "$tmp/full.json" '$.predicted_s')" 'BEGIN { exit !(a * 5 < b) }'; echo $?)" \
    "the adapters' refit is far shorter than the full weights'"

# The adapters replay like any tensors: every byte verified on 6 ranks.
"$REFIT" plan "$data/tiny-lora.lua" --db "$tmp/tiny.db" >/dev/null
ok $? "refit plan: tiny Llama's adapters from TP2 onto TP4"
is "$(sql "$tmp/tiny.db" "SELECT count(*), count(DISTINCT class) FROM tensor")" "24|3" \
    "24 adapters (3 modules x 4 layers x A and B) of 3 classes (replicated, column, row)"
is "$(sql "$tmp/tiny.db" "SELECT group_concat(lora || lora_merge, ' ') FROM (SELECT lora,
                         lora_merge FROM tensor WHERE name LIKE 'model.layers.0.self_attn.q%'
                         ORDER BY id)")" "A1 B1" "each adapter says its part and the merge"
replay_checked "$tmp/tiny.db" 1 6 "the LoRA plan, merged on the engine"
# The engine folds B A into its shard of W after the wire: a phase of its own, and the
# replay's check recomputes W + B A from the pattern, so a spoiled adapter spoils its weight.
"$REFIT" sim "$data/tiny-lora.lua" --db "$tmp/tiny.db" >/dev/null
is "$(sql "$tmp/tiny.db" "SELECT abs(m.start_seconds - d.finish_seconds) < 1e-12 AND
                         abs(p.seconds - m.finish_seconds) < 1e-12 AND m.bytes > 0
                         FROM predicted_phase m, predicted_phase d, prediction p
                         WHERE m.run_id = 2 AND m.phase = 'merge' AND d.run_id = 2 AND
                         d.phase = 'deliver' AND p.run_id = 2")" 1 \
    "the merge follows the wire and ends the prediction"
if [ -x "${REFIT_EXEC:-./exec/refit-exec}" ] && command -v "${MPIRUN:-mpirun}" >/dev/null; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 REFIT_EXEC_FAULT=3:corrupt \
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        "${MPIRUN:-mpirun}" --oversubscribe -np 6 "${REFIT_EXEC:-./exec/refit-exec}" \
        --db "$tmp/tiny.db" --run 1 --backend mpi --check --iters 1 --warmup 0 \
        >"$tmp/bad.out" 2>&1
    # One byte of A [16, 256] spoils a column of the 64-row shard of q_proj it merges into.
    is "$? $(grep -o 'verified .*: [0-9]* wrong' "$tmp/bad.out" | grep -o '[0-9]* wrong')" \
        "1 65 wrong" "a spoiled adapter byte: it and the 64 merged elements it feeds are wrong"
else
    echo "ok $((n + 1)) # SKIP refit-exec needs MPI"; n=$((n + 1))
fi
# The routed experts' stacked weights have stacked adapters, classed as vLLM's fused-MoE
# LoRA shards them (gate and up: A whole, B split as W; down: A split, B whole), merged per
# expert on the engine.
"$REFIT" plan "$data/tiny-moe-lora.lua" --db "$tmp/moe.db" >/dev/null
ok $? "refit plan: tiny Qwen3-MoE's adapters, the routed experts' included"
is "$(sql "$tmp/moe.db" "SELECT group_concat(substr(name, 35) || ' ' || class || ' ' || shape,
                        ', ') FROM (SELECT name, class, shape FROM tensor WHERE name LIKE
                        'model.layers.0.mlp.experts.%' AND name NOT LIKE '%up_proj%'
                        ORDER BY name)")" \
    "down_proj.lora_A.weight expert_row [8, 8, 64], down_proj.lora_B.weight expert_replicated [8, 128, 8], gate_proj.lora_A.weight expert_replicated [8, 8, 128], gate_proj.lora_B.weight expert_column [8, 64, 8]" \
    "stacked adapters A [E, r, in] and B [E, out, r], classed per expert weight"
replay_checked "$tmp/moe.db" 1 6 "the experts' adapters, merged per expert"
grep -v 'merge = true' "$data/tiny-lora.lua" | sed 's/targets = { "q_proj", "o_proj", "down_proj" },/targets = { "q_proj", "o_proj", "down_proj" } },/;
    s|"../exec/tiny-llama.lua"|"'"$SRCDIR"'/t/data/exec/tiny-llama.lua"|' >"$tmp/unmerged.lua"
"$REFIT" plan "$tmp/unmerged.lua" --db "$tmp/unmerged.db" >/dev/null
ok $? "refit plan: the same adapters, not merged"
replay_checked "$tmp/unmerged.db" 1 6 "the LoRA plan without a merge"

# Faults, at the scenario's line and field (each message: t/lua/errors.lua): nothing stored.
"$REFIT" plan "$SRCDIR/t/data/bad/update-target.lua" --db "$tmp/bad.db" >/dev/null 2>&1
is "$? $(test -e "$tmp/bad.db"; echo $?)" "1 1" "a faulty update is refused, nothing stored"
done_testing
