#!/bin/sh
# End to end: RL framework configs composed as the frameworks compose them
# (models/lib/compose.lua, sim/yaml_lua.c): YAML aliases and merges are copies, OmegaConf's
# relative references and oc.select, Hydra's defaults lists, packages, search path and
# overrides (verl), the scenario's sides.overrides as the framework's command line, fields
# set beside sides, and what NeMo RL and verl configs say that refit now reads: DTensor
# (FSDP2) policies, vLLM EP above TP, SGLang, Megatron generation, verl's FSDP actors and
# offload flags, model names under their Hugging Face aliases.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/yaml
db=$tmp/compose.db
cd "$tmp" || exit 1

# plan NAME SCENARIO-TEXT: writes $tmp/NAME.lua and plans it into $db (stdout in NAME.out).
plan() {
    printf '%s\n' "$2" >"$tmp/$1.lua"
    "$REFIT" plan "$tmp/$1.lua" --db "$db" >"$tmp/$1.out" 2>"$tmp/$1.err"
}
# side RUN SIDE: the stored side's sizes.
side() {
    sql "$db" "SELECT json_extract(scenario_json, '\$.$2.gpus') || ' ' ||
        json_extract(scenario_json, '\$.$2.first_gpu') || ' ' ||
        json_extract(scenario_json, '\$.$2.layout') || ' ' ||
        json_extract(scenario_json, '\$.$2.dtype') FROM run WHERE id = $1"
}
last_run() { sql "$db" "SELECT max(id) FROM run"; }

# --- Aliases and merges are copies ------------------------------------------------------
# The distillation case: the teacher's megatron_cfg is the policy's, merged in through
# <<: *POLICY_BASE; a child that sets only the teacher's sizes leaves the policy's tp2 cp2
# pp2 (dp1 on 8 GPUs) as OmegaConf does. Before, the override wrote through to the policy.
plan distill "return { cluster = 'dgx-h100', sides = { nemo_rl = '$data/distill-child.yaml' },
    strategy = 'reshard' }"
ok $? "refit plan: a distillation recipe whose child overrides the teacher"
r=$(last_run)
is "$(side "$r" train)" "8 0 tp2 cp2 pp2 dp1 ep1 etp1 bf16" \
    "distillation: the policy keeps tp2 cp2 pp2 dp1 (the teacher's override stays the teacher's)"
# ${...precision} in the policy's vllm_cfg is the policy's precision (bfloat16), not the
# teacher's fp8 the child set.
is "$(side "$r" infer)" "8 0 tp2 pp1 dp1 ep1 x4 replicas bf16" \
    "distillation: \${...precision} resolves relative to the policy's own section"

# <<: [*a, *b] merges each mapping, the earlier winning; keys written beside win over both.
cat >"$tmp/merge.yaml" <<'YAML'
defaults: DATA/verl-qwen3-30b.yaml
big: &big
  tensor_model_parallel_size: 4
  expert_parallel_size: 4
small: &small
  tensor_model_parallel_size: 2
  data_parallel_size: 2
  expert_parallel_size: 2
actor_rollout_ref:
  rollout:
    <<: [*big, *small]
    expert_parallel_size: 8
YAML
sed -i "s|DATA|$data|" "$tmp/merge.yaml"
plan merge "return { cluster = 'dgx-h100', sides = { verl = 'merge.yaml' }, strategy = 'reshard' }"
ok $? "refit plan: <<: [*big, *small]"
is "$(side "$(last_run)" infer)" "16 0 tp4 pp1 dp2 ep8 x2 replicas bf16" \
    "<<: [*big, *small]: tp 4 from the first, dp 2 from the second, ep 8 written beside"

# An alias is a copy: changing the aliased section through a child leaves the anchor's
# other user alone (here both in one file: the rollout aliases the actor's sizes).
cat >"$tmp/alias-base.yaml" <<'YAML'
defaults: DATA/verl-qwen3-30b.yaml
sizes: &sizes
  tensor_model_parallel_size: 2
actor_rollout_ref:
  rollout: *sizes
  actor:
    megatron:
      tensor_model_parallel_size: 2
      pipeline_model_parallel_size: 2
      expert_model_parallel_size: 4
YAML
sed -i "s|DATA|$data|" "$tmp/alias-base.yaml"
printf 'defaults: alias-base.yaml\nactor_rollout_ref:\n  rollout:\n    name: vllm\n    tensor_model_parallel_size: 8\n' \
    >"$tmp/alias.yaml"
plan alias "return { cluster = 'dgx-h100', sides = { verl = 'alias.yaml' }, strategy = 'reshard' }"
ok $? "refit plan: a child changes an aliased section"
is "$(sql "$db" "SELECT json_extract(scenario_json, '\$.infer.tp') FROM run WHERE id = $(last_run)")" \
    "8" "an aliased section changed through a child: the rollout takes tp 8"

# --- OmegaConf references ---------------------------------------------------------------
cat >"$tmp/select.yaml" <<'YAML'
defaults: DATA/verl-qwen3-30b.yaml
actor_rollout_ref:
  rollout:
    tensor_model_parallel_size: ${oc.select:actor_rollout_ref.rollout.tp_wanted,8}
    gpu_memory_utilization: ${oc.select:.share,0.7}
    share: 0.55
YAML
sed -i "s|DATA|$data|" "$tmp/select.yaml"
plan select "return { cluster = 'dgx-h100', sides = { verl = 'select.yaml' }, strategy = 'reshard' }"
ok $? "refit plan: oc.select references"
is "$(sql "$db" "SELECT json_extract(scenario_json, '\$.infer.tp') || ' ' ||
    json_extract(scenario_json, '\$.infer.gpu_memory_utilization') FROM run WHERE id = $(last_run)")" \
    "8 0.55" "oc.select: the default for a missing key, the key (relative .share) when present"

# --- Hydra: verl's defaults lists, packages, ??? and the command line ---------------------
plan ppo "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml' } }"
is "$? $(cat "$tmp/ppo.err")" "1 refit: $data/hydra/rollout/rollout.yaml:1: actor_rollout_ref.rollout.name: ??? (a value verl expects on its command line); add \"actor_rollout_ref.rollout.name=...\" to the scenario's sides.overrides" \
    "Hydra: a ??? value reached through actor_rollout_ref.rollout's group default names its file and the override"
plan ppo2 "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml',
    overrides = { 'actor_rollout_ref.rollout.name=vllm', 'actor_rollout_ref.model.path=Qwen/Qwen3-8B',
        'trainer.nnodes=2', '+trainer.val_before_train=false', '~trainer.total_epochs' } } }"
ok $? "Hydra: ppo_trainer.yaml with the command line's overrides"
r=$(last_run)
# dp_actor: strategy fsdp over every GPU (engine/fsdp.yaml at actor.fsdp_config), actor.yaml
# at the actor's own package, the rollout's tp 2 from rollout/rollout.yaml.
is "$(side "$r" train) | $(side "$r" infer) | $(sql "$db" "SELECT model, cluster_nodes FROM run WHERE id = $r")" \
    "16 0 tp1 cp1 pp1 dp16 ep1 etp1 fsdp bf16 | 16 0 tp2 pp1 dp1 ep1 x8 replicas bf16 | qwen3-8b|2" \
    "Hydra: an FSDP actor on 2 x 8 GPUs, the rollout's group default, the model and nodes from the command line"
plan recipe "return { cluster = 'dgx-h100', sides = { verl = '$data/recipe/config/grpo_megatron.yaml' } }"
ok $? "Hydra: a recipe found through hydra.searchpath (file://t/data/yaml/hydra)"
r=$(last_run)
# Llama-3.1-8B-Instruct is shipped as llama3-8b; a dense model's null expert TP is 1.
is "$(side "$r" train) | $(side "$r" infer) | $(sql "$db" "SELECT model FROM run WHERE id = $r")" \
    "8 0 tp2 cp1 pp1 dp4 ep1 etp1 bf16 | 8 0 tp4 pp1 dp1 ep1 x2 replicas bf16 | llama3-8b" \
    "Hydra recipe: Megatron TP2 of a dense model (expert TP null), SGLang TP4, Llama-3.1-8B-Instruct as llama3-8b"
plan switch "return { cluster = 'dgx-h100', sides = { verl = '$data/recipe/config/grpo_switch.yaml',
    overrides = { 'actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4' } } }"
ok $? "Hydra: a recipe's override of the actor group"
r=$(last_run)
is "$(side "$r" train) | $(sql "$db" "SELECT model FROM run WHERE id = $r")" \
    "8 0 tp4 cp1 pp1 dp2 ep1 etp1 bf16 | qwen3-8b" \
    "Hydra: override actor@actor_rollout_ref.actor: megatron_actor (Qwen3-8B-Base as qwen3-8b)"
plan group "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml',
    overrides = { 'actor@actor_rollout_ref.actor=megatron_actor', 'actor_rollout_ref.rollout.name=vllm',
        'actor_rollout_ref.model.path=Qwen/Qwen3-8B' } } }"
ok $? "Hydra: a group chosen on the command line"
is "$(side "$(last_run)" train)" "8 0 tp1 cp1 pp1 dp8 ep1 etp1 bf16" \
    "Hydra: actor@actor_rollout_ref.actor=megatron_actor selects the Megatron actor"
plan badover "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml',
    overrides = { 'no equals sign' } } }"
is "$? $(cat "$tmp/badover.err")" \
    "1 refit: $tmp/badover.lua:2: sides.overrides.1: expected key=value, +key=value or ~key (as on the framework's command line), got \"no equals sign\"" \
    "a malformed override names its entry"

# Fifteen levels of four duplicate parents would be 4^15 loads: stopped at 256 configs.
i=0
while [ $i -lt 15 ]; do
    up=$((i + 1))
    printf 'defaults: [l%d.yaml, l%d.yaml, l%d.yaml, l%d.yaml]\nk%d: 1\n' $up $up $up $up $i \
        >"$tmp/l$i.yaml"
    i=$up
done
printf 'cluster: {num_nodes: 1, gpus_per_node: 8}\n' >"$tmp/l15.yaml"
plan dup "return { cluster = 'dgx-h100', sides = { nemo_rl = 'l0.yaml' } }"
is "$? $(sed 's/:[0-9]*: defaults.[0-9]*:/:N: defaults.K:/' "$tmp/dup.err")" \
    "1 refit: $tmp/l14.yaml:N: defaults.K: the defaults lists name more than 256 configs (a parent named several times at each level?); refit stops there" \
    "duplicate parents: stopped at 256 configs, not 4^15"

# --- NeMo RL: DTensor, vLLM EP above TP, SGLang, Megatron generation ----------------------
cat >"$tmp/dtensor.yaml" <<YAML
defaults: $data/nemo-rl-base.yaml
policy:
  model_name: Qwen/Qwen3-8B
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 2
    context_parallel_size: 2
  megatron_cfg:
    enabled: false
cluster:
  gpus_per_node: 8
  num_nodes: null
YAML
plan dtensor "return { cluster = { system = 'dgx-h100', nodes = 2 }, sides = { nemo_rl = 'dtensor.yaml' } }"
ok $? "NeMo RL: a DTensor (FSDP2) policy, num_nodes from the scenario's cluster.nodes"
is "$(side "$(last_run)" train)" "16 0 tp2 cp1 pp1 dp8 ep1 etp1 fsdp bf16" \
    "NeMo RL DTensor: FSDP over dp x cp (8 shards) beside TP 2, on the scenario's 2 nodes"
cat >"$tmp/ep.yaml" <<YAML
defaults: $data/nemo-rl-base.yaml
policy:
  model_name: Qwen/Qwen3-30B-A3B
  megatron_cfg:
    expert_model_parallel_size: 8
  generation:
    vllm_cfg:
      tensor_parallel_size: 2
      expert_parallel_size: 8
cluster:
  gpus_per_node: 8
YAML
plan ep "return { cluster = 'dgx-h100', sides = { nemo_rl = 'ep.yaml' } }"
ok $? "NeMo RL: vLLM expert_parallel_size 8 over tensor_parallel_size 2"
is "$(side "$(last_run)" infer)" "8 0 tp2 pp1 dp4 ep8 x1 replicas bf16" \
    "NeMo RL vLLM EP above TP: data-parallel attention inside one engine (dp = ep / tp = 4)"
cat >"$tmp/sglang.yaml" <<YAML
defaults: $data/nemo-rl-base.yaml
policy:
  model_name: Qwen/Qwen3-8B
  generation:
    backend: sglang
    sglang_cfg:
      tp_size: 4
      ep_size: 1
      mem_fraction_static: 0.7
      dtype: \${policy.precision}
cluster:
  gpus_per_node: 8
YAML
plan sglang "return { cluster = 'dgx-h100', sides = { nemo_rl = 'sglang.yaml' } }"
ok $? "NeMo RL: SGLang generation"
is "$(side "$(last_run)" infer) $(sql "$db" "SELECT json_extract(scenario_json,
    '\$.infer.gpu_memory_utilization') FROM run WHERE id = $(last_run)")" \
    "8 0 tp4 pp1 dp1 ep1 x2 replicas bf16 0.7" "NeMo RL SGLang: tp_size and mem_fraction_static"
printf 'defaults: %s\npolicy:\n  generation:\n    backend: megatron\n' "$data/nemo-rl-dsv3.yaml" \
    >"$tmp/mgen.yaml"
before=$(last_run)
plan mgen "return { cluster = 'dgx-h100', sides = { nemo_rl = 'mgen.yaml' } }"
is "$? $(cat "$tmp/mgen.out" "$tmp/mgen.err") $(last_run)" \
    "0 $tmp/mgen.yaml:4: policy.generation.backend: megatron: generation runs on the training weights themselves (colocated on the training weights): no refit traffic, nothing to plan $before" \
    "NeMo RL Megatron generation: no refit traffic, exit 0, nothing stored"

# A model id refit does not ship is read from the Hugging Face cache the framework
# downloaded it into (HF_HUB_CACHE, refs/main's snapshot: the 2-layer tiny Llama).
plan hfcache "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml',
    overrides = { 'actor_rollout_ref.rollout.name=vllm', 'actor_rollout_ref.model.path=acme/tiny-llama' } } }"
is "$?" 1 "a model id not shipped and no cache: refused"
HF_HUB_CACHE=$SRCDIR/t/data/hf-cache "$REFIT" plan "$tmp/hfcache.lua" --db "$db" >/dev/null
ok $? "the same with HF_HUB_CACHE holding models--acme--tiny-llama"
is "$(sql "$db" "SELECT json_extract(scenario_json, '\$.model.layers') FROM run WHERE id = $(last_run)")" \
    2 "the model from the cache's refs/main snapshot (2 layers)"

# A local model_name path (a snapshot folder) is read as the model.
printf 'defaults: %s\npolicy:\n  model_name: %s\ncluster:\n  gpus_per_node: 8\n' \
    "$data/nemo-rl-base.yaml" "$SRCDIR/t/data/hf-cache/models--acme--tiny-llama/snapshots/4567ef01" \
    >"$tmp/local.yaml"
plan local "return { cluster = 'dgx-h100', sides = { nemo_rl = 'local.yaml' } }"
ok $? "NeMo RL: policy.model_name a local snapshot folder"
is "$(sql "$db" "SELECT json_extract(scenario_json, '\$.model.layers') FROM run WHERE id = $(last_run)")" \
    3 "the local folder's config.json is read (the 3-layer snapshot)"

# --- verl: offload flags in the memory check ----------------------------------------------
# Llama-3.1-70B FSDP on 8 H100s: weights 17.6 GB, gradients and Adam's state over 120 GB
# more per GPU; verl's offload keeps those on the host at the sync.
off="'actor_rollout_ref.rollout.name=vllm', 'actor_rollout_ref.model.path=meta-llama/Llama-3.1-70B',
    'actor_rollout_ref.rollout.tensor_model_parallel_size=8'"
plan nooff "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml',
    overrides = { $off } } }"
is "$?" 1 "verl FSDP Llama-3.1-70B on 8 GPUs without offload: refused as not fitting"
grep -q "do not fit\|does not fit\|needs" "$tmp/nooff.err"
ok $? "verl without offload: the refusal says what does not fit"
plan off "return { cluster = 'dgx-h100', sides = { verl = '$data/hydra/ppo_trainer.yaml',
    overrides = { $off, 'actor_rollout_ref.actor.fsdp_config.param_offload=true',
        'actor_rollout_ref.actor.fsdp_config.optimizer_offload=true' } } }"
ok $? "verl FSDP Llama-3.1-70B with param and optimizer offload: fits"
grep -q "grads 0.0 offloaded to the host, optimizer 0.0 offloaded to the host" "$tmp/off.out"
ok $? "verl offload: the memory line says gradients and optimizer state are on the host"

# --- Fields set beside sides -------------------------------------------------------------
plan beside "return { cluster = 'dgx-h100', sides = { verl = '$data/verl-qwen3-30b.yaml' },
    infer = { placement = 'packed', tp = 8 }, strategy = 'reshard' }"
ok $? "a scenario that reads its sides from verl and sets infer fields beside"
r=$(last_run)
is "$(side "$r" infer) $(sql "$db" "SELECT json_extract(scenario_json, '\$.infer.placement')
    FROM run WHERE id = $r")" "16 0 tp8 pp1 dp1 ep1 x2 replicas bf16 packed" \
    "beside sides: the scenario's infer.tp and placement win"
"$REFIT" show "$r" --db "$db" | grep -q "sides      verl $data/verl-qwen3-30b.yaml; set in the scenario: infer.placement, infer.tp"
ok $? "refit show names the config file and the fields the scenario set"
plan beside_bad "return { cluster = 'dgx-h100', sides = { verl = '$data/verl-qwen3-30b.yaml' },
    infer = { tp = 3 } }"
is "$? $(cat "$tmp/beside_bad.err")" \
    "1 refit: $tmp/beside_bad.lua:2: infer.gpus: 16 is not a multiple of tp*pp*dp = 3" \
    "an override beside sides is reported at the scenario, not the YAML key"
plan beside_typo "return { cluster = 'dgx-h100', sides = { verl = '$data/verl-qwen3-30b.yaml' },
    infer = { gpuz = 8 } }"
is "$? $(cat "$tmp/beside_typo.err")" \
    "1 refit: $tmp/beside_typo.lua:2: infer.gpuz: unknown key 'gpuz' (did you mean 'gpus'?)" \
    "a misspelt field beside sides is checked like any scenario field"

done_testing
