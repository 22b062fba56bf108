-- errors.lua: TAP tests of error messages: every error is one string
-- "<file>:<line>: <dotted.field>: <message>" naming where the user wrote the fault.
-- Usage: lua5.4 t/lua/errors.lua <models-dir>

package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local tap = require("tap")
local refit, data = tap.setup()
local locate = require("locate")

local bad = data .. "/bad/"

-- What an unknown model or cluster name is told: the shipped presets, in order (a preset
-- added to models/ is added here too, on purpose: the message lists every one).
local MODELS = "'deepseek-v3', 'kimi-k2', 'kimi-k3', 'llama3-405b', 'llama3-70b', "
    .. "'llama3-8b', 'qwen3-235b-a22b', 'qwen3-30b-a3b', 'qwen3-32b', 'qwen3-8b', "
    .. "'qwen3.8-2.4t-a95b'"
local CLUSTERS = "'dgx-b200', 'dgx-h100', 'dgx-h200', 'gb200-nvl72', 'gb300-nvl72', 'localhost'"
local function unknown_model(name, suggestion)
    return string.format("unknown model '%s'%s: there is no %s/%s.lua; the models refit ships "
        .. "are %s, or give the path of a model file", name, suggestion, refit.models_dir,
        name, MODELS)
end
local function unknown_cluster(name, suggestion)
    return string.format("unknown cluster '%s'%s: there is no %s/clusters/%s.lua; the "
        .. "clusters refit ships are %s, or give the path of a cluster file", name, suggestion,
        refit.models_dir, name, CLUSTERS)
end

-- Scenario files with one fault each: file, line, field, message.
local SCENARIOS = {
    { "unknown-key.lua", 7, "train.tpp", "unknown key 'tpp' (did you mean 'tp'?)" },
    -- A LoRA update (models/lib/update.lua).
    { "update-rank.lua", 7, "update.rank", "required for kind 'lora' (the adapters' rank r)" },
    { "update-full-rank.lua", 7, "update.rank", "set for kind 'full'; it is a field of kind "
        .. "'lora'" },
    -- A refit that overlaps generation.
    { "overlap-rolling-layer.lua", 8, "overlap.granularity", "set for rolling engines, which "
        .. "are taken out of generation and refitted in place; the granularity is where an "
        .. "engine that keeps generating lands the new weights (engines = 'all')" },
    { "overlap-profile.lua", 8, "overlap", "under profile nemo-rl: a framework's refit is its "
        .. "step (export, transfer, load), which refit does not overlap with generation yet; "
        .. "leave `framework` out" },
    { "overlap-generation.lua", 7, "overlap.generation_gbps", "60 GB/s of generation is at or "
        .. "above the inference GPUs' NIC port (48 GB/s after calibration), leaving the refit "
        .. "nothing" },
    -- 4-bit engines.
    { "fp4-delta.lua", 6, "infer.dtype", "mxfp4 with a delta update: its values are half a "
        .. "byte each, which refit's encodings do not model (bf16 or fp8)" },
    { "fp4-profile.lua", 6, "infer.dtype", "nvfp4 under profile nemo-rl: the profiles model "
        .. "the frameworks' FP8 conversions only; leave `framework` out for refit's own plan" },
    -- A delta update.
    { "update-delta-rank.lua", 7, "update.rank", "set for kind 'delta'; it is a field of kind "
        .. "'lora'" },
    { "update-delta-broadcast.lua", 7, "strategy", "broadcast with a delta update: a broadcast "
        .. "moves whole tensors, a delta only the changed elements of each box; use reshard, "
        .. "hierarchical or auto" },
    { "update-delta-density.lua", 8, "update.density", "expected a number from 0.000001 to 1 in "
        .. "steps of 0.000001 (the changed share of each box), got 1e-07" },
    { "update-delta-role.lua", 7, "update.density.experts", "not a role; the keys are default, "
        .. "embedding, attention, dense_ffn, expert, shared_expert, router, norm, lm_head" },
    { "update-delta-values.lua", 7, "update.values", "'fp8', but the values travel in the "
        .. "wire's dtype, bf16 here (infer.dtype bf16); a narrower residual is lossy, which "
        .. "refit does not model" },
    { "update-target.lua", 10, "update.targets.2", "'q_prj' names no linear module of "
        .. "qwen3-8b; its linear modules are down_proj, gate_proj, k_proj, o_proj, q_proj, "
        .. "up_proj, v_proj, or 'all-linear'" },
    { "update-experts.lua", 7, "infer.ep", "8, but the adapters of qwen3-30b-a3b's routed "
        .. "experts need an engine without expert parallelism (vLLM runs LoRA on fused MoE "
        .. "layers with ep = 1 only); set infer.ep = 1 or name the attention and dense modules "
        .. "in update.targets" },
    { "wrong-type.lua", 6, "train.tp", "expected an integer from 1 to 1048576, got '2'" },
    { "missing-field.lua", 6, "infer.gpus", "missing" },
    { "out-of-range.lua", 8, "train.tp", "expected an integer from 1 to 1048576, got -2" },
    { "gpus-multiple.lua", 6, "train.gpus", "250 is not a multiple of tp*cp*pp = 16" },
    { "dp-mismatch.lua", 6, "train.dp", "8 does not match gpus/(tp*cp*pp) = 256/16 = 16" },
    { "edp.lua", 6, "train.ep", "tp*cp*dp = 16 is not a multiple of ep*etp = 32" },
    { "infer-ep.lua", 7, "infer.ep", "expected 1 or tp*dp = 8 (expert parallelism spans "
        .. "the engine's TP x DP ranks), got 4" },
    { "replicas.lua", 6, "infer.replicas", "4 does not match gpus/(tp*pp*dp) = 64/8 = 8" },
    { "strategy.lua", 7, "strategy",
      "expected one of 'broadcast', 'reshard', 'hierarchical', 'hybrid', 'auto', 'p2p', got "
          .. "'magic'" },
    { "sources.lua", 7, "sources", "expected one of 'balanced', 'local', got 'nearest'" },
    { "policy.lua", 8, "policy", "returned 'teleport' for model.embed_tokens.weight; "
        .. "expected 'reshard' or 'broadcast' or 'hierarchical'" },
    { "pp-first-last.lua", 6, "train.pp_first",
      "the other 55 layers do not split evenly over the other 14 stages" },
    { "pp-uneven.lua", 6, "train.pp", "36 layers do not split over 20 stages (middle "
        .. "stages of 2 layers leave 0); set pp_first and pp_last" },
    { "dense-ep.lua", 5, "train.ep", "the model has no experts, so ep and etp must be 1" },
    { "positional.lua", 6, "train.1",
      "unexpected positional entry 8 (fields are written name = value)" },
    { "no-model.lua", 4, "model", unknown_model("no-such-model", "") },
    { "model-typo.lua", 4, "model",
      unknown_model("deepseek-v4", " (did you mean 'deepseek-v3'?)") },
    { "not-a-table.lua", 3, "return",
      "expected the file to return a scenario table, got 8" },
    { "sides-not-a-string.lua", 5, "sides.nemo_rl", "expected a string, got 3" },
    -- Cluster overrides are checked with the preset's schema, every field optional.
    { "cluster-unknown-key.lua", 7, "cluster.fabric.oversubscripton",
      "unknown key 'oversubscripton' (did you mean 'oversubscription'?)" },
    { "cluster-range.lua", 6, "cluster.fabric.oversubscription",
      "expected a number from 1 to 1000000, got 0.5" },
    { "cluster-efficiency.lua", 8, "cluster.calibration.nic_efficiency",
      "expected a number > 0 and <= 1, got 1.5" },
    { "cluster-type.lua", 4, "cluster.nvlink.gbps",
      "expected a number > 0 and <= 1000000, got '450 GB/s'" },
    { "cluster-positional.lua", 4, "cluster.1",
      "unexpected positional entry 2 (fields are written name = value)" },
    { "cluster-system.lua", 5, "cluster.system",
      unknown_cluster("dgx-h1000", " (did you mean 'dgx-h100'?)") },
    { "cluster-nics.lua", 5, "cluster.nic.per_node",
      "3 NICs do not split the 8 GPUs of a node evenly" },
    { "cluster-relation.lua", 7, "cluster.gpus_per_node", "8 GPUs per NVLink domain neither "
        .. "divide nor are a multiple of the 6 GPUs of a node" },
    { "cluster-localhost-nodes.lua", 5, "cluster.nodes", "2 nodes x 8 GPUs need NICs: "
        .. "nic.per_node is 0 and one NVLink domain holds 8 GPUs" },
    -- GPU ranges must exist in the cluster.
    { "cluster-train-fit.lua", 5, "train.gpus", "GPUs 0..255 do not fit in the cluster's "
        .. "128 GPUs (dgx-h100: 16 nodes x 8 GPUs)" },
    { "cluster-infer-fit.lua", 7, "infer.gpus", "GPUs 256..511 do not fit in the cluster's "
        .. "384 GPUs (dgx-h100: 48 nodes x 8 GPUs)" },
    -- Placement: engines never split across NVLink domains, or the scenario says how.
    { "placement-first-gpu.lua", 8, "infer.first_gpu", "36 is not at an NVLink domain "
        .. "boundary, so engines of 64 GPUs would be split across domains of 72 GPUs; start at "
        .. "a multiple of 72 (72), or set infer.placement = 'packed'" },
    { "placement-gpus.lua", 7, "infer.gpus", "6 engines of 16 GPUs do not fill domains of 72 "
        .. "GPUs evenly (4 engines per domain); use a multiple of 4 engines (64 GPUs), or set "
        .. "infer.placement = 'packed'" },
    { "placement-fit.lua", 7, "infer.gpus", "GPUs 0..279 (24 of them idle between engines: "
        .. "placement 'domain' keeps an engine inside one NVLink domain; 'packed' puts them back "
        .. "to back) do not fit in the cluster's 260 GPUs (gb200-nvl72: 65 nodes x 4 GPUs)" },
    { "placement-value.lua", 7, "infer.placement",
      "expected one of 'domain', 'packed', got 'spread'" },
    -- Sizes are bounded before any sum or product, so nothing wraps (2^20 GPUs at most).
    { "first-gpu-max.lua", 6, "train.first_gpu",
      "expected an integer from 0 to 1048575, got 9223372036854775807" },
    { "tp-huge.lua", 5, "train.tp",
      "expected an integer from 1 to 1048576, got 4611686018427387904" },
    { "gpus-float.lua", 6, "infer.gpus", "expected an integer from 1 to 1048576, got 4294967296" },
    { "gpus-fraction.lua", 6, "infer.gpus", "expected an integer from 1 to 1048576, got 7.5" },
    { "cluster-gpus.lua", 5, "cluster.nodes",
      "1048576 nodes x 8 GPUs = 8388608 GPUs, more than 1048576" },
    -- Rates, latencies and memory: finite, in range, NaN refused.
    { "cluster-rate.lua", 5, "cluster.nvlink.gbps",
      "expected a number > 0 and <= 1000000, got 1e+300" },
    { "cluster-nan.lua", 6, "cluster.calibration.message_latency_us",
      "expected a number from 0 to 10000000, got nan" },
    { "cluster-latency.lua", 5, "cluster.fabric.switch_latency_us",
      "expected a number from 0 to 10000000, got 1000000000000" },
    { "cluster-channels.lua", 5, "cluster.calibration.channel_gbps",
      "nic.gbps / channel_gbps = 50 / 1e-09 needs 5e+10 network channels per peer, more than "
        .. "1048576; set calibration.net_channels_per_peer" },
    { "relay-fanout.lua", 7, "relay.fanout", "expected an integer from 1 to 64, got 0" },
    { "chunk-zero.lua", 8, "chunk_kib", "expected an integer from 1 to 1073741824, got 0" },
    { "staging-huge.lua", 7, "staging_mb",
      "expected an integer from 1 to 1000000000, got 4611686018427387904" },
    { "staging-hbm.lua", 7, "staging_mb", "50000 MB x 2 streams = 100 GB of staging does not "
        .. "fit in the GPU's 80 GB of HBM (staging_mb * 1e6 * calibration.streams <= hbm_gb * "
        .. "1e9)" },
    { "staging-streams.lua", 5, "cluster.calibration.streams", "100 streams x 1.6 GB of "
        .. "default staging (2% of hbm_gb, at most 5 GiB) = 160 GB do not fit in the GPU's 80 "
        .. "GB of HBM; lower streams or set staging_mb" },
    -- Models built by hand are checked like every other.
    { "model-by-hand.lua", 6, "model.tensors.1", "shape [2147483648, 2147483648] has "
        .. "4.612e+18 elements, more than 2^48 = 281474976710656 (tensor 'w')" },
    { "model-by-hand-layers.lua", 4, "model.layers",
      "expected an integer from 1 to 2147483647, got 1099511627776" },
    { "model-by-hand-bare.lua", 3, "model.tensors", "missing" },
    -- vLLM's and Megatron's TP rules for attention heads.
    { "infer-heads.lua", 7, "infer.tp", "the model's 32 attention heads do not split evenly "
        .. "over tp = 3 (vLLM requires heads % tp == 0)" },
    { "infer-kv-heads.lua", 10, "infer.tp", "the model's 4 KV heads neither split over nor "
        .. "replicate evenly across tp = 6 (vLLM requires kv_heads % tp == 0 or tp % kv_heads "
        .. "== 0)" },
    { "infer-mla-heads.lua", 7, "infer.tp", "the model's 128 attention heads do not split "
        .. "evenly over tp = 48 (vLLM requires heads % tp == 0)" },
    { "train-heads.lua", 5, "train.tp", "the model's 32 attention heads do not split evenly "
        .. "over tp = 3 (Megatron requires heads % tp == 0)" },
    { "train-kv-heads.lua", 6, "train.tp", "the model's 8 KV heads do not split evenly over "
        .. "tp = 16 (Megatron requires kv_heads % tp == 0)" },
    { "train-fp8.lua", 6, "train.dtype", "expected one of 'bf16', got 'fp8' (the training side "
        .. "holds BF16 parameters, as Megatron keeps them even when it computes in FP8; for FP8 "
        .. "weights on the wire set infer.dtype = 'fp8')" },
    -- Framework profiles (framework.lua): a preset, a profile file, or a table of overrides
    -- checked with the profile's schema and relations, reported as framework.<field>.
    { "framework-unknown.lua", 7, "framework", "unknown profile 'nemo_rl' (did you mean "
        .. "'nemo-rl'?); the presets are 'checkpoint-engine', 'm2n', 'miles', 'nemo-rl', "
        .. "'perplexity', 'slime', 'verl', or give the path of a profile file" },
    { "framework-type.lua", 7, "framework", "expected a string or a table, got 3" },
    { "framework-missing-file.lua", 7, "framework",
      bad .. "no-such-profile.lua: no such file or directory" },
    { "framework-typo.lua", 9, "framework.broadcast.bufers",
      "unknown key 'bufers' (did you mean 'buffers'?)" },
    { "framework-enum.lua", 9, "framework.broadcast.root",
      "expected one of 'first', 'stage', 'owner', got 'last'" },
    { "framework-bucket.lua", 10, "framework.broadcast.bucket.mib", "a fixed bucket excludes "
        .. "hbm_fraction and max_mib; write { mib = } or { hbm_fraction =, max_mib = }" },
    { "framework-fraction.lua", 9, "framework.broadcast.bucket.hbm_fraction", "1e-11 of the "
        .. "GPU's 80 GB is 0.8 bytes, less than a bucket's least 1 MiB (as bucket.mib)" },
    { "framework-fraction-fit.lua", 10, "framework.broadcast.bucket.hbm_fraction", "2 buffers x "
        .. "72 GB of bucket = 144 GB of staging do not fit in the GPU's 80 GB of HBM; set "
        .. "staging_mb or calibration.streams" },
    { "framework-wait-load.lua", 9, "framework.broadcast.wait_load", "true with 2 buffers: a "
        .. "sender that waits for each load overlaps nothing, so buffers must be 1" },
    { "framework-section.lua", 9, "framework.strategies", "strategies broadcast and hybrid "
        .. "need a broadcast section (how the framework runs its broadcast path); there is "
        .. "none" },
    { "framework-added.lua", 10, "framework.reshard.stage_groups", "missing" },
    { "framework-auto.lua", 7, "framework.strategies.1",
      "expected one of 'broadcast', 'reshard', 'hierarchical', 'hybrid', 'p2p', got 'auto'" },
    -- Strategy p2p: a profile's point-to-point path (models/lib/scenario.lua).
    { "p2p-no-profile.lua", 7, "strategy", "p2p is a framework's point-to-point path: name a "
        .. "framework profile that runs one (framework = 'miles', 'nemo-rl', 'checkpoint-engine' "
        .. "or 'perplexity')" },
    { "p2p-unsupported.lua", 8, "strategy", "p2p: profile verl has no point-to-point path (it "
        .. "runs broadcast)" },
    { "p2p-fsdp.lua", 5, "train.fsdp", "profile perplexity gathers with FSDP's full_tensor(), "
        .. "but the training side is Megatron; set train.fsdp = true" },
    { "p2p-pairs.lua", 7, "infer.gpus", "16 inference GPUs, but profile nemo-rl pairs training "
        .. "rank i with inference rank i: it needs at least as many training GPUs (8)" },
    { "p2p-into.lua", 8, "framework.p2p.load_calls", "'weights', but the receiver loads: bytes "
        .. "written into the engine's live weights need no loader; set into = 'buffer' or "
        .. "load_calls = 0" },
}

for _, case in ipairs(SCENARIOS) do
    local file, line, field, message = table.unpack(case)
    tap.raises(function()
        refit.load_scenario(bad .. file)
    end, string.format("%s%s:%d: %s: %s", bad, file, line, field, message),
        string.format("scenario %s: %s at line %d", file, field, line))
end

-- Model files, loaded by path; the faults sit inside constructor calls.
local MODELS = {
    { "typo-global.lua", 4, "transfomer", "unknown global (did you mean 'transformer'?)" },
    { "typo-constructor.lua", 2, "transformer.dens", "not defined (did you mean 'dense'?)" },
    { "global-assign.lua", 2, "hidden", "assignment to a global; declare it local" },
    { "model-unknown-key.lua", 6, "attention.haeds",
      "unknown key 'haeds' (did you mean 'heads'?)" },
    { "model-missing.lua", 5, "moe.experts", "missing" },
    { "model-range.lua", 8, "moe.experts_per_token", "300 is more than the 256 experts" },
    { "model-kind.lua", 5, "attention.kind", "expected one of 'gqa', 'mla', got 'mha'" },
    { "model-heads.lua", 4, "attention.kv_heads", "heads 6 is not a multiple of kv_heads 4" },
    -- Every size at most 2^31 - 1, a tensor at most 2^48 elements, a model 2^53 parameters.
    { "model-hidden.lua", 4, "hidden", "expected an integer from 1 to 2147483647, got 4294967296" },
    { "model-head-dim.lua", 5, "attention.head_dim",
      "expected an integer from 1 to 2147483647, got 1099511627776" },
    { "model-numel.lua", 2, "model.embed_tokens.weight", "shape [2147483647, 1048576] has "
        .. "2.252e+15 elements, more than 2^48 = 281474976710656" },
    { "model-params.lua", 2, "model.layers.4.self_attn.v_proj.weight",
      "the model's parameters reach 9.007e+15 here, more than 2^53 = 9007199254740992" },
    { "model-layers.lua", 4, "layers", "2147483647 layers make more than 1048576 tensors (at "
        .. "least 9 per layer), the most refit plans" },
    -- A model changed after its constructor checked it is checked again.
    { "model-changed.lua", 7, "layers",
      "expected an integer from 1 to 2147483647, got 1099511627776" },
    -- Include cycles, however the path is spelt.
    { "include-self.lua", 2, "include", "'" .. bad .. "include-self.lua' includes itself ("
        .. bad .. "include-self.lua -> " .. bad .. "include-self.lua)" },
}

for _, case in ipairs(MODELS) do
    local file, line, field, message = table.unpack(case)
    tap.raises(function()
        refit.load_model(bad .. file)
    end, string.format("%s%s:%d: %s: %s", bad, file, line, field, message),
        string.format("model %s: %s at line %d", file, field, line))
end

tap.raises(function()
    refit.load_model(bad .. "include-a.lua")
end, string.format("%sinclude-b.lua:2: include: '%sinclude-a.lua' includes itself "
    .. "(%sinclude-a.lua -> %sinclude-b.lua -> %s../bad/./include-a.lua)", bad, bad, bad, bad, bad),
    "an include cycle through another file names the chain")

-- A chain of 17 model files, each including the next: deeper than the 16 refit follows (the
-- cap that catches cycles a lexical path comparison cannot see, through symbolic links).
local chain = os.tmpname()
local function chain_file(i)
    return string.format("%s-%d.lua", chain, i)
end
for i = 1, 17 do
    local f = assert(io.open(chain_file(i), "w"))
    if i < 17 then
        f:write(string.format("return include(%q)\n", chain_file(i + 1):match("[^/]*$")))
    else
        f:write("return include(\"qwen3-8b\")\n")
    end
    f:close()
end
tap.raises(function()
    refit.load_model(chain_file(1))
end, string.format("%s:1: include: includes nest deeper than 16 files (%s -> ...)",
    chain_file(16), chain_file(1)), "includes nest at most 16 files deep")
local ok16, deep = pcall(refit.load_model, chain_file(3))
tap.ok(ok16 and deep.name == "qwen3-8b", "16 nested model files load (15 here, then qwen3-8b)",
    deep)
for i = 1, 17 do
    os.remove(chain_file(i))
end
os.remove(chain)

-- Cluster files, loaded by path: faults inside cluster.system{...} name the cluster file.
local CLUSTERS = {
    { "cluster-file-missing.lua", 6, "nvlink.gbps", "missing" },
    { "cluster-file-key.lua", 10, "fabric.nodes_per_spine", "unknown key 'nodes_per_spine'" },
    { "cluster-file-calibration.lua", 2, "calibration", "missing" },
    { "cluster-file-domain.lua", 7, "nvlink.domain_gpus", "3 GPUs per NVLink domain neither "
        .. "divide nor are a multiple of the 8 GPUs of a node" },
    { "cluster-file-typo.lua", 2, "cluster.sytem", "not defined (did you mean 'system'?)" },
    { "cluster-file-plain.lua", 2, "return",
      "expected the file to return a cluster built by cluster.system{...}, got a table" },
}

for _, case in ipairs(CLUSTERS) do
    local file, line, field, message = table.unpack(case)
    tap.raises(function()
        refit.load_cluster(bad .. file)
    end, string.format("%s%s:%d: %s: %s", bad, file, line, field, message),
        string.format("cluster %s: %s at line %d", file, field, line))
end

-- Profile files, loaded by path: faults inside framework.profile{...} name the profile file.
local framework = require("framework")
local PROFILES = {
    { "framework-file-uncited.lua", 6, "sources",
      "no citation for reshard (add a source with field = 'reshard' or one of its fields)" },
    { "framework-file-field.lua", 11, "sources.2.field",
      "'broadcast.bufers' is not a profile field (did you mean 'broadcast.buffers'?)" },
    { "framework-file-key.lua", 7, "broadcast.pack_cpy",
      "unknown key 'pack_cpy' (did you mean 'pack_copy'?)" },
    { "framework-file-overlap.lua", 8, "broadcast.buffers",
      "2 buffers overlap export, wire and load; cite the code that lets them (a source with "
          .. "field = 'broadcast.buffers'), or set 1" },
}
for _, case in ipairs(PROFILES) do
    local file, line, field, message = table.unpack(case)
    tap.raises(function()
        framework.load(bad .. file, { file = "t", line = 0, scan = false }, "framework", {})
    end, string.format("%s%s:%d: %s: %s", bad, file, line, field, message),
        string.format("profile %s: %s at line %d", file, field, line))
end
tap.raises(function()
    refit.load_scenario(bad .. "framework-uses-bad-file.lua")
end, bad .. "framework-file-uncited.lua:6: sources: no citation for reshard (add a source "
    .. "with field = 'reshard' or one of its fields)",
    "a fault in a scenario's profile file names the profile file's line")

tap.raises(function()
    refit.load_scenario(bad .. "uses-bad-cluster.lua")
end, bad .. "cluster-file-domain.lua:7: nvlink.domain_gpus: 3 GPUs per NVLink domain neither "
    .. "divide nor are a multiple of the 8 GPUs of a node",
    "a fault in a scenario's cluster file names the cluster file's line")
tap.raises(function()
    refit.load_cluster(42)
end, "42:0: cluster: expected a cluster name or a path, got 42",
    "load_cluster refuses a number")
tap.raises(function()
    refit.load_cluster("no-such-cluster")
end, "no-such-cluster:0: cluster: " .. unknown_cluster("no-such-cluster", ""),
    "load_cluster names a missing preset")

-- The sandbox (sandbox.lua, file.lua): error values that are not strings, and paths that
-- are not files, each become one line with the place.
local SANDBOX = {
    { "error-table.lua", 2, "error object is a table (error() should be given a string)" },
    { "error-nil.lua", 3, "error object is nil (error() should be given a string)" },
    { "error-number.lua", 2, "error object is the number 42 (error() should be given a string)" },
    { "error-level0.lua", 3, "no place given" },
    { "model-directory.lua", 3, "model: " .. bad .. "../hf: is a directory, but not a "
        .. "Hugging Face model folder: it has no config.json (a snapshot) and no snapshots/ (a "
        .. "cache folder models--org--name)" },
}
for _, case in ipairs(SANDBOX) do
    local file, line, message = table.unpack(case)
    tap.raises(function()
        refit.load_scenario(bad .. file)
    end, string.format("%s%s:%d: %s", bad, file, line, message),
        string.format("sandbox %s: line %d", file, line))
end
tap.raises(function()
    refit.load_scenario(bad .. "no-such-scenario.lua")
end, bad .. "no-such-scenario.lua: no such file or directory",
    "sandbox: a missing scenario named directly is the path and the reason")
tap.raises(function()
    refit.load_scenario(bad .. "deep-nesting.lua")
end, bad .. "deep-nesting.lua: brackets or blocks nested too deeply for Lua's parser",
    "sandbox: nesting past the parser's C levels names the file (found by t/fuzz)")

tap.raises(function()
    refit.load_scenario(bad .. "inline-model.lua")
end, bad .. "inline-model.lua:5: layers: expected an integer from 1 to 2147483647, got 0",
    "a constructor inside a scenario names the scenario's line")
tap.raises(function()
    refit.load_scenario(bad .. "uses-bad-model.lua")
end, bad .. "model-unknown-key.lua:6: attention.haeds: unknown key 'haeds' (did you mean "
    .. "'heads'?)", "a scenario's relative model path is read from the scenario's directory")
tap.raises_prefix(function()
    refit.load_model(bad .. "syntax.lua")
end, bad .. "syntax.lua:3:", "a syntax error names file and line")
tap.raises(function()
    refit.load_model(42)
end, "42:0: model: expected a model name, a path or a model, got 42",
    "load_model refuses a number")

-- Hugging Face configs: JSON has no lines, so line 0 and the JSON field name.
local configs = dofile(data .. "/hf/configs.lua")

local function config(name, changes)
    local out = {}
    for k, v in pairs(configs[name]) do
        out[k] = v
    end
    for k, v in pairs(changes) do
        out[k] = v
    end
    return out
end

-- The fixtures written by hand as JSON (t/data/hf/README), decoded by the tests' own
-- decoder; refit's path without refit.json stays as it is (JSON nulls read as absent).
local json = require("json")
for _, name in ipairs({ "gpt-oss-20b", "qwen3-next-80b-a3b", "deepseek-v3.2", "llama-4-scout",
                        "llama-4-maverick", "kimi-k2.5", "nemotron-nano-12b-v2" }) do
    local f = assert(io.open(data .. "/hf/" .. name .. "/config.json"))
    configs[name] = json.decode(f:read("a"))
    f:close()
end

local src = "hf/x/config.json"
local HF = {
    { "deepseek-v3", { hidden_size = false }, "hidden_size", "missing" },
    { "qwen3-8b", { model_type = "gpt2" }, "model_type", "'gpt2' is not supported "
        .. "(supported: deepseek_v2, deepseek_v3, deepseek_v32, gemma3, gemma3_text, "
        .. "glm4_moe, gpt_oss, kimi_k2, kimi_k25, llama, llama4, llama4_text, minimax_m2, "
        .. "mistral, mixtral, nemotron_h, qwen2, qwen2_moe, qwen3, qwen3_moe, qwen3_next)" },
    { "nemotron-nano-12b-v2", { hybrid_override_pattern = "M-M" }, "hybrid_override_pattern",
      "3 characters for 62 layers (num_hidden_layers)" },
    { "deepseek-v3", { num_hidden_layers = "61" }, "num_hidden_layers",
      "expected an integer from 1 to 2147483647, got '61'" },
    -- Sizes are bounded as in model files, and named by their JSON key.
    { "deepseek-v3", { hidden_size = 2^32, vocab_size = 2^32 }, "hidden_size",
      "expected an integer from 1 to 2147483647, got 4294967296" },
    { "qwen3-235b-a22b", { num_experts = 2^40 }, "num_experts",
      "expected an integer from 1 to 2147483647, got 1099511627776" },
    { "deepseek-v3", { num_experts_per_tok = 300 }, "num_experts_per_tok",
      "300 is more than the 256 experts" },
    { "deepseek-v3", { num_hidden_layers = 200000 }, "num_hidden_layers",
      "200000 layers make more than 1048576 tensors (at least 9 per layer), the most refit "
        .. "plans" },
    -- Dense layers among MoE layers need the dense width; a listed layer must exist.
    { "qwen3-235b-a22b", { decoder_sparse_step = 2, intermediate_size = false },
      "intermediate_size", "missing" },
    { "qwen3-235b-a22b", { mlp_only_layers = { 94 } }, "mlp_only_layers",
      "layer 94 outside 0..93" },
    { "qwen3-235b-a22b", { decoder_sparse_step = 95 }, "decoder_sparse_step",
      "leaves no MoE layer among 94 layers" },
    { "llama3-8b", { mlp_bias = true }, "mlp_bias",
      "true is not supported: MLP biases are not modelled" },
    { "deepseek-v3", { moe_layer_freq = 2 }, "moe_layer_freq",
      "2 is not supported: only every-layer MoE is modelled" },
    -- transformers 5's names stand for the old ones; both given must agree.
    { "qwen3-235b-a22b", { num_local_experts = 64 }, "num_local_experts",
      "64 disagrees with num_experts = 128 (they name the same size)" },
    -- The model types added with issue 23 (fixtures decoded by t/lua/json.lua).
    { "gpt-oss-20b", { layer_types = { "full_attention", "sliding_attention" } }, "layer_types",
      "2 entries for 24 layers; one per layer" },
    { "gpt-oss-20b", { layer_types = { "sliding_attention", "chunked_attention" } },
      "layer_types.2", "expected one of 'sliding_attention', 'full_attention', got "
        .. "'chunked_attention'" },
    { "gpt-oss-20b", { intermediate_size = 2890 }, "intermediate_size",
      "2890 is not a multiple of 32, the block MXFP4 scales" },
    { "gpt-oss-20b", { num_experts = 16 }, "num_experts",
      "16 disagrees with num_local_experts = 32 (they name the same size)" },
    { "qwen3-next-80b-a3b", { layer_types = { "linear_attention", "full_attention",
      "full_attention" }, num_hidden_layers = 3 }, "layer_types", "only a full-attention "
        .. "layer every n-th layer (n = full_attention_interval) is modelled" },
    { "qwen3-next-80b-a3b", { full_attention_interval = 64 }, "full_attention_interval",
      "64 leaves no full-attention layer among 48 layers" },
    { "deepseek-v3.2", { q_lora_rank = false }, "q_lora_rank",
      "the indexer's query comes from the q latent: it needs q_lora_rank" },
    { "llama-4-scout", { text_config = false }, "text_config",
      "missing (a llama4 config nests its language model's config there)" },
    { "llama-4-scout", { text_config = 3 }, "text_config", "expected a JSON object, got 3" },
    { "llama-4-scout", { ["text_config.hidden_size"] = false }, "text_config.hidden_size",
      "missing" },
    { "llama-4-scout", { ["text_config.model_type"] = "llama" }, "text_config.model_type",
      "'llama' is not supported (supported: llama4_text)" },
    { "llama-4-maverick", { ["text_config.intermediate_size_mlp"] = false },
      "text_config.intermediate_size_mlp", "missing" },
    { "llama-4-scout", { ["text_config.num_experts_per_tok"] = 17 },
      "text_config.num_experts_per_tok", "17 is more than the 16 experts" },
    { "deepseek-v3", { n_routed_experts = false }, "n_routed_experts", "missing" },
}

for _, case in ipairs(HF) do
    local name, changes, field, message = table.unpack(case)
    -- false stands for "remove the field" (nil cannot be stored in `changes`).
    -- A dotted key ("text_config.hidden_size") changes a nested config (copied first).
    local flat = {}
    for k, v in pairs(changes) do
        if not k:find(".", 1, true) then
            flat[k] = v
        end
    end
    local cfg = config(name, flat)
    for k, v in pairs(changes) do
        local outer, inner = k:match("^([^.]+)%.(.+)$")
        if outer then
            local copy = {}
            for kk, vv in pairs(cfg[outer]) do
                copy[kk] = vv
            end
            copy[inner] = v ~= false and v or nil
            cfg[outer] = copy
        elseif v == false then
            cfg[k] = nil
        end
    end
    tap.raises(function()
        refit.model_from_hf(cfg, name, src)
    end, string.format("%s:0: %s: %s", src, field, message),
        string.format("config.json (%s): %s", name, field))
end

-- A config.json that is not an object names the file.
tap.raises(function()
    refit.model_from_hf({ 1, 2, 3 }, "x", "bad/array.json")
end, "bad/array.json:0: config: expected a JSON object, got an array",
    "config.json: an array is refused")
tap.raises(function()
    refit.model_from_hf(42, "x", "bad/scalar.json")
end, "bad/scalar.json:0: config: expected a JSON object, got 42",
    "config.json: a scalar is refused")

-- Parts of a multimodal checkpoint: asked where the part was named.
tap.raises(function()
    refit.model_from_hf(configs["kimi-k2.5"], "k", src, { part = "vision" })
end, src .. ":0: part: 'vision': refit models the vision tower of llama4 checkpoints only, not "
    .. "of model_type 'kimi_k25'", "config.json: a vision part only where refit models one")
tap.raises(function()
    local cfg = config("llama-4-scout", {})
    cfg.vision_config = nil
    refit.model_from_hf(cfg, "s", src, { part = "vision" })
end, src .. ":0: vision_config.hidden_size: missing", "config.json: the vision part needs "
    .. "vision_config")
local hf_cfg = data .. "/hf/llama-4-scout/config.json"
local MODEL_SPECS = {
    { { path = hf_cfg, part = "audio" }, hf_cfg .. ":0: model.part: expected one of "
      .. "'language', 'vision', got 'audio'" },
    { { path = hf_cfg, prat = "vision" }, hf_cfg .. ":0: model.prat: unknown key 'prat' (did "
      .. "you mean 'part'?)" },
    { { path = "qwen3-8b", part = "vision" },
      "qwen3-8b:0: model.part: only a Hugging Face config.json or folder has parts" },
}
for _, case in ipairs(MODEL_SPECS) do
    local spec, message = table.unpack(case)
    tap.raises(function()
        refit.load_model(spec)
    end, message, "model spec table: " .. message:match("model%.%w+"))
end

-- Folders: a snapshot (config.json) or a cache folder (refs/main, snapshots/); each fault
-- names the path that is wrong.
local cache = data .. "/hf-cache/"
local FOLDERS = {
    { "models--acme--two", "2 snapshots and no refs/main to choose one; give the snapshot "
      .. "folder (%s/snapshots/<commit>)" },
    { "models--acme--stale", "%s/snapshots/cccc9999/config.json: no such file or directory "
      .. "(the snapshot refs/main names)" },
    { "models--acme--bad-ref", "%s/refs/main: expected a commit hash, got 'not a commit'" },
    { "models--acme--two/snapshots", "%s: is a directory, but not a Hugging Face model folder: "
      .. "it has no config.json (a snapshot) and no snapshots/ (a cache folder "
      .. "models--org--name)" },
}
for _, case in ipairs(FOLDERS) do
    local folder, message = table.unpack(case)
    local dir = cache .. folder
    -- A message starting with the path names it; others follow "<dir>: ".
    message = message:sub(1, 2) == "%s" and message:format(dir) or dir .. ": "
        .. message:format(dir)
    tap.raises(function()
        refit.load_model(dir)
    end, dir .. ":0: model: " .. message, "folder " .. folder .. ": named with its fault")
end

local floats = refit.model_from_hf(config("qwen3-8b", { hidden_size = 4096.0 }), "q", src)
tap.is(math.type(floats.tensors[1].shape[2]), "integer",
    "config.json: integral floats are read as integers")
local lite = config("deepseek-v3", {})
lite.q_lora_rank = nil
local lite_model = refit.model_from_hf(lite, "lite", src)
local q_proj
for _, t in ipairs(lite_model.tensors) do
    if t.name == "model.layers.0.self_attn.q_proj.weight" then
        q_proj = t
    end
end
tap.ok(q_proj and q_proj.shape[1] == 128 * 192 and q_proj.class == "column",
    "config.json without q_lora_rank: MLA with a plain q_proj")

-- Studies: misuse of the refit module names the study's line, not models/lib/study.lua.
local study = require("study")
local function no_api()
    return {}
end
local STUDIES = {
    { "study-sim-number.lua", 3, "refit.sim", "expected a scenario table or a path, got 42" },
    { "study-with-nil.lua", 2, "refit.with", "expected a scenario table as the base, got nil" },
    { "study-table.lua", 2, "refit.table.rows", "expected a list, got 'rows'" },
    { "study-option.lua", 4, "refit.sim.options.stratgy",
      "unknown key 'stratgy' (did you mean 'strategy'?)" },
    { "study-format.lua", 2, "refit.table.columns.1.format", "'%d' cannot format 'reshard': "
        .. "bad argument #2 to 'format' (number expected, got string)" },
    { "study-model.lua", 2, "refit.model", unknown_model("no-such-model", "") },
    { "study-cycle.lua", 5, "refit.with",
      "tables nest deeper than 32 levels (does one contain itself?)" },
    { "study-search-option.lua", 3, "refit.search.options.gpu",
      "unknown key 'gpu' (did you mean 'gpus'?)" },
    { "study-search-dtype.lua", 3, "refit.search.options.dtypes.1",
      "expected one of 'bf16', 'fp8', got 'fp4'" },
    { "study-search-args.lua", 3, "refit.search", "expected a table of options { gpus =, "
        .. "dtypes =, pp =, top =, label =, strategy =, spanning = } as the second argument, "
        .. "got 5" },
    { "study-search-label.lua", 3, "refit.search.options.label",
      "not valid UTF-8 (a label is stored as text)" },
    { "study-estimate-label.lua", 3, "refit.estimate.options.label",
      "an estimate is not stored, so it has no label" },
}
for _, case in ipairs(STUDIES) do
    local file, line, field, message = table.unpack(case)
    tap.raises(function()
        study.run(bad .. file, refit, no_api)
    end, string.format("%s%s:%d: %s: %s", bad, file, line, field, message),
        string.format("study %s: %s at line %d", file, field, line))
end

-- A table that is stored (the C side gives study.run its table_api) must be UTF-8: the
-- error names the row and the column's key, and nothing reaches the store.
local stored = 0
tap.raises(function()
    study.run(bad .. "study-table-utf8.lua", refit, no_api, nil, function()
        stored = stored + 1
    end)
end, bad .. "study-table-utf8.lua:3: refit.table.rows.2.name: not valid UTF-8 (a table is "
    .. "stored as text)", "a stored table's cell that is not UTF-8")
tap.is(stored, 0, "and the table is not handed to the store")

-- The C side hands refit.sim's table to load_scenario_table, as this api does.
tap.raises(function()
    study.run(bad .. "study-cycle-sim.lua", refit, function(spec)
        refit.load_scenario_table(spec)
    end)
end, bad .. "study-cycle-sim.lua:4: scenario: tables nest deeper than 32 levels (does one "
    .. "contain itself?)", "a study's scenario table that contains itself")

-- schema: the integer ranges and types no model or scenario field uses yet.
local schema = require("schema")
local site = { file = "t.lua", line = 0, scan = false }
local RANGE = { type = "record", fields = { n = { type = "integer", min = 2, max = 4 },
                                             k = { type = "integer", min = -1 } } }
tap.raises(function()
    schema.validate({ n = 5 }, RANGE, site, "x")
end, "t.lua:0: x.n: expected an integer from 2 to 4, got 5", "schema: integer range")
tap.raises(function()
    schema.validate({ k = 1.5 }, RANGE, site, "x")
end, "t.lua:0: x.k: expected an integer >= -1, got 1.5", "schema: integer lower bound")
tap.is(schema.validate({ n = 3.0 }, RANGE, site, "x").n, 3, "schema: 3.0 is the integer 3")
local NUMBERS = { type = "record", fields = {
    f = { type = "number", min = 0, max = 1 }, g = { type = "number", above = 0 },
    r = { type = "record", default = {}, fields = { d = { type = "integer", default = 7 } } } } }
tap.raises(function()
    schema.validate({ f = -0.5 }, NUMBERS, site, "x")
end, "t.lua:0: x.f: expected a number from 0 to 1, got -0.5", "schema: number range")
tap.raises(function()
    schema.validate({ g = 0 }, NUMBERS, site, "x")
end, "t.lua:0: x.g: expected a number > 0, got 0", "schema: exclusive lower bound")
tap.raises(function()
    schema.validate({ g = 0 / 0 }, NUMBERS, site, "x")
end, "t.lua:0: x.g: expected a number > 0, got nan", "schema: NaN is refused")
tap.raises(function()
    schema.validate({ n = 0 / 0 }, RANGE, site, "x")
end, "t.lua:0: x.n: expected an integer from 2 to 4, got nan", "schema: NaN is no integer")
tap.raises(function()
    schema.validate({ g = math.huge }, NUMBERS, site, "x")
end, "t.lua:0: x.g: expected a number > 0, got inf", "schema: infinity is refused")
tap.is(schema.validate({}, NUMBERS, site, "x").r.d, 7,
    "schema: an absent record with a table default gets its fields' defaults")
local LIST = { type = "list", min_items = 1, max_items = 2,
               items = { type = "integer", min = 1, required = true } }
tap.raises(function()
    schema.validate({ 1, 2, 3 }, LIST, site, "s")
end, "t.lua:0: s: expected a list of integers of 1 to 2 entries, got a table of 3 entries",
    "schema: a list too long")
tap.raises(function()
    schema.validate({ 1, x = 2 }, LIST, site, "s")
end, "t.lua:0: s: expected a list of integers of 1 to 2 entries, got a table of 2 entries",
    "schema: a list with a named key")
tap.raises(function()
    schema.validate({ 1, 0 }, LIST, site, "s")
end, "t.lua:0: s.2: expected a positive integer, got 0", "schema: a list entry is checked")
tap.is(schema.validate({ 2.0 }, LIST, site, "s")[1], 2, "schema: list entries are normalised")
tap.raises(function()
    schema.validate("x", { type = "string", values = { "a" }, hint = "why" }, site, "h")
end, "t.lua:0: h: expected one of 'a', got 'x' (why)", "schema: a hint says why")
tap.raises(function()
    schema.validate(2^53, { type = "integer", min = 1, max = 10 }, site, "f")
end, "t.lua:0: f: expected an integer from 1 to 10, got 9007199254740992",
    "schema: an integral float is shown as the value")

-- locate: keys are found past strings, long brackets, comments and function bodies.
local source = [==[
-- a comment with { braces and key = 1
local s = "}{ x = 1" .. '\'{'
return {
    a = [=[ ]] b = { ]=],
    --[[ c = { } ]]
    train = {
        tp = 2, ["pp"] = 4,
        { 1, 2 },
        f = function(t) local x = { y = 1 }; return x end,
        after = 3,
    },
    m = f{
        deep = { er = 1 },
    },
}
]==]
local parsed = locate.parse(source)
local root = locate.root(parsed, nil)
tap.is(locate.find(root, "a"), 4, "locate: a key after a long string opening")
tap.is(locate.find(root, "train.tp"), 7, "locate: a nested key")
tap.is(locate.find(root, "train.pp"), 7, "locate: a [\"string\"] key")
tap.is(locate.find(root, "train.1"), 8, "locate: a positional item")
tap.is(locate.find(root, "train.after"), 10, "locate: a key after a function body")
tap.is(locate.find(root, "train.zzz"), 6, "locate: a missing key names its table's key")
tap.is(locate.find(root, "c"), nil, "locate: keys in comments are not keys")
local call = locate.root(parsed, 12)
tap.is(locate.find(call, "deep.er"), 13, "locate: inside a constructor call's table")
tap.is(call.line, 12, "locate: the call's table starts on the call line")

tap.done()
