#!/bin/sh
# End to end: a scenario's sides read from the RL framework's own YAML config (sides =
# { nemo_rl = ... } or { verl = ... }, models/lib/rlconfig.lua, sim/yaml_lua.c) plan exactly
# what the same sides written by hand plan, and a fault in the YAML is reported at the YAML
# file, line and dotted key.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/yaml
db=$tmp/yaml.db

# The plan's figures without what differs between two runs of one plan (its id, its
# scenario's name, the time it took).
figures() {
    grep -v '"run_id"\|"scenario"\|_seconds\|peak_rss' "$1"
}
# The stored description of run $1 without its source and the paths of the files it read.
description() {
    sql "$db" "SELECT json_remove(scenario_json, '\$.source', '\$.sides') FROM run WHERE id = $1"
}

"$REFIT" plan "$data/dsv3-nemo-rl.lua" --db "$db" --json >"$tmp/yaml.json"
ok $? "refit plan dsv3-nemo-rl.lua (sides from a NeMo RL DeepSeek-V3 recipe)"
"$REFIT" plan "$data/dsv3-hand.lua" --db "$db" --json >"$tmp/hand.json"
ok $? "refit plan dsv3-hand.lua (the same sides by hand)"
figures "$tmp/yaml.json" >"$tmp/a"
figures "$tmp/hand.json" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b"
ok $? "NeMo RL recipe: the plan equals the hand-written one's"
is "$(description 1)" "$(description 2)" \
    "NeMo RL recipe: the stored description equals the hand-written one's"
# Recipe: Megatron TP1 PP16 EP16 on 64 - 32 nodes (stages 3, 14 x 4, 2), vLLM TP32 on the
# 32 generation nodes after them, nodes and model from the file, the nemo-rl profile.
is "$(sql "$db" "SELECT side, gpus, first_gpu, tp, pp, ep, etp, dp, replicas, stage_layers
    FROM side WHERE run_id = 1 ORDER BY side DESC")" \
    "train|256|0|1|16|16|1|16|1|3,4,4,4,4,4,4,4,4,4,4,4,4,4,4,2
infer|256|256|32|1|1|1|1|8|61" "NeMo RL recipe: the sides as the recipe writes them"
is "$(sql "$db" "SELECT model, cluster_nodes, json_extract(scenario_json, '\$.framework.name'),
    json_extract(scenario_json, '\$.infer.gpu_memory_utilization') FROM run WHERE id = 1")" \
    "deepseek-v3|64|nemo-rl|0.8" \
    "NeMo RL recipe: model, nodes, profile and gpu_memory_utilization from the file"

"$REFIT" plan "$data/qwen3-verl.lua" --db "$db" --json >"$tmp/yaml.json"
ok $? "refit plan qwen3-verl.lua (sides from a verl Megatron PPO config)"
"$REFIT" plan "$data/qwen3-hand.lua" --db "$db" --json >"$tmp/hand.json"
ok $? "refit plan qwen3-hand.lua (the same sides by hand)"
figures "$tmp/yaml.json" >"$tmp/a"
figures "$tmp/hand.json" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b"
ok $? "verl config: the plan equals the hand-written one's"
is "$(description 3)" "$(description 4)" \
    "verl config: the stored description equals the hand-written one's"
# verl's hybrid engine: actor and rollout share all 16 GPUs, so no profile (the verl
# profile is its non-colocated checkpoint engine).
is "$(sql "$db" "SELECT side, gpus, first_gpu, tp, pp, ep, dp FROM side WHERE run_id = 3
    ORDER BY side DESC")" "train|16|0|2|2|4|4
infer|16|0|4|1|1|1" "verl config: colocated sides on the trainer's 16 GPUs"
is "$(sql "$db" "SELECT json_type(scenario_json, '\$.framework') FROM run WHERE id = 3")" "" \
    "verl config: colocated, so no framework profile"

# A child that only changes policy.precision: the base's ${policy.precision} reference in
# vllm_cfg.precision follows it (defaults inheritance, then interpolation), and a separate
# verl rollout pool (rollout.nnodes) is placed after the trainer's GPUs with the profile.
cat >"$tmp/fp8.yaml" <<'YAML'
defaults: DATA/nemo-rl-dsv3.yaml
policy:
  precision: "fp8"
YAML
sed -i "s|DATA|$data|" "$tmp/fp8.yaml"
cat >"$tmp/pool.yaml" <<'YAML'
defaults: [DATA/verl-qwen3-30b.yaml]
rollout:
  nnodes: 1
  n_gpus_per_node: 8
anchored: &rollout_sizes
  tensor_model_parallel_size: 2
  data_parallel_size: 2
  expert_parallel_size: 2
actor_rollout_ref:
  rollout:
    <<: *rollout_sizes
    data_parallel_size: 1
YAML
sed -i "s|DATA|$data|" "$tmp/pool.yaml"
printf 'return { cluster = "dgx-h100", sides = { nemo_rl = "fp8.yaml" }, strategy = "broadcast" }\n' \
    >"$tmp/fp8.lua"
printf 'return { cluster = "dgx-h100", sides = { verl = "pool.yaml" }, %s }\n' \
    'strategy = "broadcast"' >"$tmp/pool.lua"
"$REFIT" plan "$tmp/fp8.lua" --db "$db" >/dev/null
ok $? "refit plan fp8.lua (defaults: the DeepSeek-V3 recipe, precision fp8)"
is "$(sql "$db" "SELECT dtype FROM side WHERE run_id = 5 AND side = 'infer'")" "fp8" \
    "the parent's \${policy.precision} follows the child's policy.precision"
"$REFIT" plan "$tmp/pool.lua" --db "$db" >/dev/null
ok $? "refit plan pool.lua (verl with a rollout pool of its own)"
# Merged rollout sizes: tp 2 and ep 2 from the anchor, dp 1 written beside the merge.
is "$(sql "$db" "SELECT side, gpus, first_gpu, tp, dp, ep FROM side WHERE run_id = 6
    ORDER BY side DESC") $(sql "$db" "SELECT cluster_nodes, json_extract(scenario_json,
    '\$.framework.name') FROM run WHERE id = 6")" "train|16|0|2|4|4
infer|8|16|2|1|2 3|verl" "verl rollout pool: GPUs 16..23, <<-merged sizes, the verl profile"

# fails NAME SCENARIO WANT: `refit plan SCENARIO` fails with exactly WANT on stderr.
fails() {
    "$REFIT" plan "$2" --db "$tmp/bad.db" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    is "$rc $(cat "$tmp/out" "$tmp/err")" "1 refit: $3" "$1"
}
# The faults are written in $tmp and named from there, as a user names a file beside the
# scenario.
cd "$tmp" || exit 1
# bad NAME YAML-TEXT WANT: a NeMo RL file of YAML-TEXT (after defaults: the DeepSeek-V3
# recipe unless it says otherwise) named by a scenario in $tmp; WANT names bad.yaml.
bad() {
    printf '%s\n' "$2" | sed "s|DATA|$data|" >"$tmp/bad.yaml"
    printf 'return { cluster = "dgx-h100", sides = { %s = "bad.yaml" }, strategy = "%s" }\n' \
        "${kind:-nemo_rl}" "${strategy:-broadcast}" >"$tmp/bad.lua"
    fails "$1" bad.lua "$3"
}
bad "a parallel size that is a string" "defaults: DATA/nemo-rl-dsv3.yaml
policy:
  megatron_cfg:
    tensor_model_parallel_size: \"x\"" \
    'bad.yaml:4: policy.megatron_cfg.tensor_model_parallel_size: expected an integer from 1 to 1048576, got "x"'
bad "a parallel size of 0" "defaults: DATA/nemo-rl-dsv3.yaml
policy:
  generation:
    vllm_cfg:
      tensor_parallel_size: 0" \
    'bad.yaml:5: policy.generation.vllm_cfg.tensor_parallel_size: expected an integer from 1 to 1048576, got 0'
bad "a missing required key, at the mapping that should hold it" "cluster:
  gpus_per_node: 8
policy:
  megatron_cfg:
    enabled: true" \
    "bad.yaml:1: cluster.num_nodes: missing (the launcher sets it); set the scenario's cluster = { system = ..., nodes = N }, or add \"cluster.num_nodes=N\" to its sides.overrides"
# shellcheck disable=SC2016 # the ${...} are the file's text, not the shell's
bad "an unresolved \${...} in a key refit reads" "defaults: DATA/nemo-rl-dsv3.yaml
policy:
  generation:
    vllm_cfg:
      tensor_parallel_size: \${mul:4,8}" \
    'bad.yaml:5: policy.generation.vllm_cfg.tensor_parallel_size: unresolved interpolation "${mul:4,8}" (refit follows ${dotted.key}, ${..relative.key} and ${oc.select:key,default}); write the value'
bad "an unresolved \${...} in a key refit does not read is ignored, a wrong boolean is not" \
    "defaults: DATA/nemo-rl-dsv3.yaml
logger:
  log_dir: \${oc.env:HOME}
policy:
  generation:
    colocated:
      enabled: \"no\"" \
    'bad.yaml:7: policy.generation.colocated.enabled: expected true or false, got "no"'
bad "a fault in a parent is reported in the parent" "defaults: parent.yaml" \
    "$(printf 'cluster:\n  num_nodes: 1.5\n' >"$tmp/parent.yaml"; echo \
    'parent.yaml:2: cluster.num_nodes: expected an integer from 1 to 1048576, got 1.5')"
bad "sizes the layout refuses are reported at the key that set them" \
    "defaults: DATA/nemo-rl-dsv3.yaml
policy:
  megatron_cfg:
    pipeline_model_parallel_size: 3
    num_layers_in_first_pipeline_stage: null
    num_layers_in_last_pipeline_stage: null" \
    "$data/nemo-rl-dsv3.yaml:41: policy.generation.colocated.resources.num_nodes: refit's train.gpus: 256 is not a multiple of tp*cp*pp = 3"
bad "GPUs per node that are not the cluster's" "defaults: DATA/nemo-rl-dsv3.yaml
cluster:
  gpus_per_node: 4" \
    "bad.yaml:3: cluster.gpus_per_node: 4 GPUs per node, but the cluster dgx-h100 has 8; name the cluster the config runs on"
bad "a model refit does not ship" "defaults: DATA/nemo-rl-dsv3.yaml
policy:
  model_name: org/No-Such-Model" \
    "bad.yaml:3: policy.model_name: 'org/No-Such-Model' is not a model refit ships (tried models/no-such-model.lua) nor a folder; set model in the scenario (a shipped name, or the model's config.json or snapshot folder)"
bad "neither Megatron nor DTensor enabled, at the key the parent wrote" "defaults: DATA/nemo-rl-dsv3.yaml
policy:
  megatron_cfg:
    enabled: false" \
    "$data/nemo-rl-base.yaml:30: policy.dtensor_cfg.enabled: neither policy.megatron_cfg.enabled nor policy.dtensor_cfg.enabled is true; refit reads the training layout of the enabled one"
bad "a YAML syntax error names the file, line and column" "cluster:
  num_nodes: [1, 2
policy: {}" \
    "bad.yaml:3: column 7: did not find expected ',' or ']' (while parsing a flow sequence)"
bad "a duplicate key" "cluster:
  num_nodes: 1
  num_nodes: 2" \
    "bad.yaml:3: cluster.num_nodes: duplicate key"
bad "a file that inherits from itself" "defaults: bad.yaml" \
    "bad.yaml:1: defaults: 'bad.yaml' inherits from itself (bad.yaml -> bad.yaml)"
# The decoder's bounds: nesting, aliases (copies, as OmegaConf makes them: ten levels of
# ten aliases each, 10^10 scalars expanded, stop at the node budget), one document, tags.
bad "nesting deeper than 64 levels" "a: $(printf '{a: %.0s' $(seq 70))1$(printf '}%.0s' $(seq 70))" \
    "bad.yaml:1: nests deeper than 64 levels"
bad "an alias of no anchor" "cluster: *nope" "bad.yaml:1: unknown alias *nope"
bad "aliases of aliases stop at the node budget" "l0: &l0 [x, x, x, x, x, x, x, x, x, x]
$(for i in 1 2 3 4 5 6 7 8 9; do
    a="*l$((i - 1))"
    echo "l$i: &l$i [$a, $a, $a, $a, $a, $a, $a, $a, $a, $a]"
done)
cluster: {gpus_per_node: 8}" \
    "bad.yaml:6: the document expands to more than 262144 values (aliases are copies, as OmegaConf makes them); write the repeated sections once"
bad "a list at the top" "- 1" "bad.yaml:1: expected a mapping of keys at the top, got a list"
bad "a second document" "a: 1
---
b: 2" "bad.yaml:2: a second YAML document; refit reads one per file"
bad "a !!str-tagged number is a string" "cluster:
  gpus_per_node: 8
  num_nodes: !!str 2" 'bad.yaml:3: cluster.num_nodes: expected an integer from 1 to 1048576, got "2"'
kind=verl bad "a verl FSDP actor sharded in groups (HSDP)" "defaults: DATA/verl-qwen3-30b.yaml
actor_rollout_ref:
  actor:
    strategy: fsdp
    fsdp_config:
      fsdp_size: 4" \
    'bad.yaml:6: actor_rollout_ref.actor.fsdp_config.fsdp_size: 4 shards within groups of that many of the 16 GPUs (HSDP), which refit does not model; use -1 (every GPU)'
kind=verl bad "a verl rollout engine refit does not know" "defaults: DATA/verl-qwen3-30b.yaml
actor_rollout_ref:
  rollout:
    name: hf" \
    'bad.yaml:4: actor_rollout_ref.rollout.name: expected "sglang" or "vllm", got "hf"'

# Hostile and faulty verl files (t/data/bad/yaml/): each fault named at its file, line and
# key, the value as the file wrote it, a control byte escaped, the limit said.
badfile() {
    printf 'return { cluster = "dgx-h100", sides = { verl = "%s" }, strategy = "reshard" }\n' \
        "$bad/$2.yaml" >"$tmp/f.lua"
    fails "$1" f.lua "$3"
}
bad=$SRCDIR/t/data/bad/yaml
base=$bad/../../yaml/verl-qwen3-30b.yaml
megatron_tp=actor_rollout_ref.actor.megatron.tensor_model_parallel_size
badfile "a parallel size written 2.0 is shown as 2.0" tp-float \
    "$bad/tp-float.yaml:6: $megatron_tp: expected an integer from 1 to 1048576, got 2.0"
badfile "a parallel size past the limit: the limit is said" tp-huge \
    "$bad/tp-huge.yaml:6: $megatron_tp: expected an integer from 1 to 1048576, got 1000000000"
badfile "GPUs derived from nodes: refit's field and its value come first" rollout-tp3 \
    "$base:54: trainer.nnodes: refit's infer.gpus: 16 is not a multiple of tp*pp*dp = 3"
badfile "a side that does not fit: at the key that sharded it, naming the share's key" \
    memory-share "$base:40: actor_rollout_ref.rollout.tensor_model_parallel_size: refit's infer: \
the layout does not fit: GPU 0 (stage 0) needs 18.5 GB of 0.1 (weights 15.3, staging 3.2), KV \
cache headroom -18.4 GB (the engine's share is infer.gpu_memory_utilization of hbm_gb, set by \
actor_rollout_ref.rollout.gpu_memory_utilization at $bad/memory-share.yaml:6); shard further \
(more tp, ep or pp, or more GPUs), or set allow_overcommit = true for a what-if"
badfile "a control byte in a value is written \\xNN, not echoed" control-escape \
    "$bad/control-escape.yaml:5: actor_rollout_ref.rollout.name: expected \"sglang\" or \
\"vllm\", got \"vl\\x1B[31mlm\""
badfile "a byte that is not UTF-8, at its line and column" not-utf8 \
    "$bad/not-utf8.yaml:23: column 10: not UTF-8 (byte 0xE9: incomplete UTF-8 octet sequence); \
YAML files are UTF-8"
badfile "70 references: at the key refit reads, with the chain's ends" chain-70 \
    "$bad/chain-70.yaml:6: $megatron_tp: \"\${chain.a1}\": a chain of more than 64 references \
(chain.a1 -> ... -> chain.a64); write the value"
badfile "references that loop: at the key refit reads, with the loop" chain-loop \
    "$bad/chain-loop.yaml:6: $megatron_tp: \"\${chain.a}\": its references come back to chain.a \
($megatron_tp -> chain.a -> chain.b -> chain.c -> chain.a)"
printf 'return { cluster = "dgx-h100", sides = { verl = "%s" }, strategy = "reshard" }\n' \
    "$data/chain-41.yaml" >"$tmp/f.lua"
"$REFIT" plan "$tmp/f.lua" --db "$tmp/chain.db" >/dev/null 2>"$tmp/err"
is "$? $(sql "$tmp/chain.db" "SELECT tp FROM side WHERE side = 'train'")" "0 2" \
    "41 references in a chain are followed to their value"

# The scenario's own faults name the scenario.
printf 'return {\n    cluster = "dgx-h100",\n    sides = { verl = "%s" },\n    train = 8,\n}\n' \
    "$data/verl-qwen3-30b.yaml" >"$tmp/both.lua"
fails "an override beside sides that is no table" both.lua \
    "both.lua:4: train: expected a table of fields overriding what sides.verl gives, got 8"
printf 'return {\n    cluster = "dgx-h100",\n    sides = { verl = "a.yaml", nemo_rl = "b.yaml" },\n}\n' \
    >"$tmp/two.lua"
fails "two frameworks named" two.lua \
    "two.lua:3: sides: names both nemo_rl and verl; keep one"
printf 'return {\n    cluster = "dgx-h100",\n    sides = { verl = "none.yaml" },\n}\n' >"$tmp/none.lua"
fails "a YAML file that does not exist" none.lua \
    "none.lua:3: sides.verl: none.yaml: no such file or directory"

# A layout search varies the inference side the config set, as it does a hand-written one.
"$REFIT" search "$data/qwen3-verl.lua" --top 1 --db "$tmp/search.db" --json >"$tmp/s1.json"
ok $? "refit search qwen3-verl.lua"
"$REFIT" search "$data/qwen3-hand.lua" --top 1 --db "$tmp/search.db" --json >"$tmp/s2.json"
grep -v '"run_id"\|"scenario"\|_seconds\|"label"\|"run"' "$tmp/s1.json" >"$tmp/a"
grep -v '"run_id"\|"scenario"\|_seconds\|"label"\|"run"' "$tmp/s2.json" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b"
ok $? "refit search: the candidates of the verl config equal the hand-written scenario's"
is "$(grep -c '"tp"' "$tmp/a")" 44 "refit search: 44 candidate layouts (as by hand)"

# A study changes a side the config set field by field, as it does a hand-written one.
cat >"$tmp/study.lua" <<STUDY
local base = refit.scenario("$data/qwen3-verl.lua")
refit.plan(refit.with(base, { infer = { tp = 2 } }), { label = "tp2" })
STUDY
"$REFIT" run "$tmp/study.lua" --db "$tmp/study.db" >/dev/null
ok $? "a study of a scenario with sides runs"
is "$(sql "$tmp/study.db" "SELECT r.label, s.gpus, s.tp, s.replicas FROM run r JOIN side s
    ON s.run_id = r.id AND s.side = 'infer'")" "tp2|16|2|8" \
    "the study's infer.tp = 2 replaces the config's 4, its other sizes kept"

# The config implies NeMo RL's profile; a scenario that names no strategy runs the profile's
# default path (broadcast), not refit's reshard, which the profile would refuse.
sed "s|\"nemo-rl-dsv3.yaml\"|\"$data/nemo-rl-dsv3.yaml\"|" "$data/dsv3-nemo-rl.lua" |
    grep -v 'strategy = ' >"$tmp/nostrategy.lua"
"$REFIT" plan "$tmp/nostrategy.lua" --db "$tmp/ns.db" >/dev/null
ok $? "a scenario under the implied profile plans without a strategy"
is "$(sql "$tmp/ns.db" "SELECT strategy FROM run")" broadcast "with the profile's default path"

done_testing
