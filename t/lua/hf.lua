-- hf.lua: TAP tests of the Hugging Face import (models/lib/hf.lua): every model type against
-- its published parameter count, the tensor structures that make it, the folder forms of a
-- model (snapshot, cache) and the parts of a multimodal checkpoint.
-- Usage: lua5.4 t/lua/hf.lua <models-dir>

package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local tap = require("tap")
-- Plain lua5.4 has no refit.json (the refit command's jansson decoder): t/lua/json.lua
-- stands in for it, so load_model reads the fixtures' config.json as refit does.
package.preload["refit.json"] = function()
    return require("json")
end
local refit, data = tap.setup()
local transformer = require("transformer")
local hf_dir = data .. "/hf/"

local numel, counts, by_name, shape = tap.numel, tap.counts, tap.by_name, tap.shape

-- Published totals: folder, model_type, parameters, tolerance, source. The figures are the
-- model cards' (rounded as published); t/data/hf/README names each config's source.
local PUBLISHED = {
    { "gpt-oss-120b", "gpt_oss", 116.83e9, 0.01,
      "gpt-oss model card (arXiv 2508.10925) table 1: 116.83B total" },
    { "gpt-oss-20b", "gpt_oss", 20.91e9, 0.01, "gpt-oss model card table 1: 20.91B total" },
    { "glm-4.5", "glm4_moe", 355e9, 0.01, "zai-org/GLM-4.5 model card: 355B total, 32B active" },
    { "glm-4.5-air", "glm4_moe", 106e9, 0.01,
      "zai-org/GLM-4.5-Air model card: 106B total, 12B active" },
    { "mixtral-8x7b", "mixtral", 46.7e9, 0.01,
      "Mistral AI, Mixtral of experts (2023-12-11): 46.7B total, 12.9B per token" },
    { "mixtral-8x22b", "mixtral", 141e9, 0.01,
      "Mistral AI, Cheaper, Better, Faster, Stronger (2024-04-17): 141B, 39B active" },
    { "deepseek-v3.2", "deepseek_v32", 671e9, 0.01, "DeepSeek-V3.2-Exp model card: "
      .. "V3.1-Terminus's 671B plus DSA (685B on the hub counts the 14B MTP module)" },
    { "llama-4-scout", "llama4", 109e9, 0.015, "meta-llama/Llama-4-Scout-17B-16E model "
      .. "card: 109B total, 17B active (with the vision tower, checked below)" },
    { "llama-4-maverick", "llama4", 400e9, 0.01,
      "meta-llama/Llama-4-Maverick-17B-128E model card: 400B total, 17B active" },
    { "kimi-k2.5", "kimi_k25", 1.04e12, 0.015, "moonshotai/Kimi-K2.5 model card (1T, "
      .. "Kimi K2's architecture); Kimi K2 technical report: 1.04T total" },
    { "minimax-m2", "minimax_m2", 230e9, 0.01,
      "MiniMaxAI/MiniMax-M2 model card: 230B total, 10B active" },
    { "qwen3-next-80b-a3b", "qwen3_next", 80e9, 0.01,
      "Qwen/Qwen3-Next-80B-A3B-Instruct model card: 80B total, 3B activated" },
    { "mistral-7b-v0.3", "mistral", 7.3e9, 0.01,
      "Mistral AI, Mistral 7B (2023-09-27): 7.3B parameters" },
    { "mistral-large-2407", "mistral", 123e9, 0.01,
      "mistralai/Mistral-Large-Instruct-2407 model card: 123B parameters" },
    { "qwen2.5-7b", "qwen2", 7.61e9, 0.01, "Qwen/Qwen2.5-7B model card: 7.61B" },
    { "qwen2.5-72b", "qwen2", 72.7e9, 0.01, "Qwen/Qwen2.5-72B model card: 72.7B" },
    { "qwen2.5-32b", "qwen2", 32.5e9, 0.01, "Qwen/Qwen2.5-32B model card: 32.5B" },
    { "qwen2.5-1.5b", "qwen2", 1.54e9, 0.01, "Qwen/Qwen2.5-1.5B model card: 1.54B" },
    { "deepseek-r1-distill-qwen-1.5b", "qwen2", 1.78e9, 0.01,
      "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B model page: 1.78B params (Qwen2.5-Math-1.5B, "
          .. "embeddings untied)" },
    { "qwen3-0.6b", "qwen3", 0.6e9, 0.01, "Qwen/Qwen3-0.6B model card: 0.6B" },
    { "qwen3-1.7b", "qwen3", 1.7e9, 0.02, "Qwen/Qwen3-1.7B model card: 1.7B" },
    { "qwen3-4b", "qwen3", 4.0e9, 0.01, "Qwen/Qwen3-4B model card: 4.0B" },
    { "nemotron-nano-12b-v2", "nemotron_h", 12.31e9, 0.01,
      "nvidia/NVIDIA-Nemotron-Nano-12B-v2 model page: 12.31B params (arXiv 2508.14444: the "
          .. "12B base of Nemotron Nano 2)" },
    { "nemotron-3-nano-30b-a3b", "nemotron_h", 31.6e9, 0.01,
      "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 model card: 31.6B total, 3.2B active" },
    { "gemma-3-1b", "gemma3_text", 1.0e9, 0.01,
      "google/gemma-3-1b-it model card: 1B parameters (999,885,952 in its safetensors)" },
    { "gemma-3-27b", "gemma3", 27.0e9, 0.01,
      "google/gemma-3-27b-it model card: 27B; the language model without the 0.4B SigLIP tower" },
    { "llama-3.2-1b", "llama", 1.23e9, 0.01,
      "meta-llama/Llama-3.2-1B model card: 1.23B parameters" },
    { "moonlight-16b-a3b", "deepseek_v3", 16e9, 0.01,
      "moonshotai/Moonlight-16B-A3B model card: 16B total, 3B activated" },
    { "qwen1.5-moe-a2.7b", "qwen2_moe", 14.3e9, 0.01,
      "Qwen/Qwen1.5-MoE-A2.7B model card: 14.3B total, 2.7B activated" },
    { "deepseek-v2-lite", "deepseek_v2", 15.7e9, 0.01,
      "deepseek-ai/DeepSeek-V2-Lite model card: 15.7B total, 2.4B activated" },
    { "qwen3-30b-a3b-tf5", "qwen3_moe", 30.5e9, 0.01,
      "Qwen/Qwen3-30B-A3B model card: 30.5B total, 3.3B activated" },
}

local ROLES = { embedding = true, attention = true, dense_ffn = true, expert = true,
                shared_expert = true, router = true, norm = true, lm_head = true }
local CLASSES = { column = true, row = true, vocab = true, replicated = true,
                  expert_column = true, expert_row = true }

-- The contract's invariants any model meets (t/lua/models.lua checks the model files'
-- stricter naming and quant rules); nil or what is wrong.
local function problem(model, t)
    if not ROLES[t.role] or not CLASSES[t.class] then
        return "role/class " .. tostring(t.role) .. "/" .. tostring(t.class)
    elseif t.dtype ~= "bf16" and t.dtype ~= "fp32" then
        return "dtype " .. tostring(t.dtype)
    elseif t.layer < -1 or t.layer > model.layers then
        return "layer " .. t.layer
    elseif (t.class:match("^expert_") ~= nil) ~= (t.experts > 0) then
        return "experts " .. t.experts .. " with class " .. t.class
    elseif t.experts > 0 and (#t.shape ~= 3 or t.shape[1] ~= model.experts) then
        return "stacked shape " .. shape(t)
    elseif t.quant and (t.role == "norm" or t.role == "router" or #t.shape == 1) then
        return "quant on a " .. t.role .. " tensor"
    end
    return nil
end

local models = {}
for _, e in ipairs(PUBLISHED) do
    local folder, model_type, want, tolerance, source = table.unpack(e)
    local ok, model = pcall(refit.load_model, hf_dir .. folder .. "/config.json")
    if tap.ok(ok, folder .. ": loads (" .. model_type .. ")", model) then
        models[folder] = model
        local total = counts(model)
        tap.near(total, want, tolerance, string.format("%s: %.2fB parameters, published %.4gB "
            .. "(%s)", folder, total / 1e9, want / 1e9, source))
        tap.is(model.family, model_type, folder .. ": family is the model_type")
        local problems = {}
        for _, t in ipairs(model.tensors) do
            local p = problem(model, t)
            if p then
                problems[#problems + 1] = t.name .. ": " .. p
            end
        end
        tap.ok(#problems == 0, folder .. ": every tensor meets the contract",
            table.concat(problems, "\n"))
    end
end

-- gpt-oss: sinks, biases, the router's bias, fused experts with biases, MXFP4 storage.
local oss = models["gpt-oss-120b"]
local p0 = "model.layers.0."
tap.is(shape(by_name(oss, p0 .. "self_attn.sinks")), "64", "gpt-oss: one sink per head")
tap.ok(shape(by_name(oss, p0 .. "self_attn.q_proj.bias")) == "4096"
    and by_name(oss, p0 .. "self_attn.o_proj.bias").class == "replicated",
    "gpt-oss: q/k/v/o biases, o_proj's whole beside its row-parallel weight")
tap.ok(shape(by_name(oss, p0 .. "mlp.router.weight")) == "128x2880"
    and shape(by_name(oss, p0 .. "mlp.router.bias")) == "128", "gpt-oss: a router with a bias")
local gate_up = by_name(oss, p0 .. "mlp.experts.gate_up_proj")
tap.ok(gate_up and shape(gate_up) == "128x5760x2880" and gate_up.class == "expert_column"
    and gate_up.dtype == "bf16" and gate_up.stored == "mxfp4",
    "gpt-oss: fused experts [E, 2I, H], moved in BF16, stored in MXFP4")
tap.ok(shape(by_name(oss, p0 .. "mlp.experts.gate_up_proj_bias")) == "128x5760x1"
    and by_name(oss, p0 .. "mlp.experts.down_proj_bias").stored == nil,
    "gpt-oss: expert biases stacked [E, out, 1], not MXFP4")
-- The model card: the checkpoints are 60.8 GiB and 12.8 GiB.
tap.near(transformer.checkpoint_bytes(oss), 60.8 * 2 ^ 30, 0.01,
    "gpt-oss-120b: MXFP4 checkpoint bytes match the published 60.8 GiB")
tap.near(transformer.checkpoint_bytes(models["gpt-oss-20b"]), 12.8 * 2 ^ 30, 0.01,
    "gpt-oss-20b: MXFP4 checkpoint bytes match the published 12.8 GiB")
local bf16 = refit.model_from_hf((function()
    local f = assert(io.open(hf_dir .. "gpt-oss-20b/config.json"))
    local c = require("json").decode(f:read("a"))
    f:close()
    c.quantization_config = nil
    return c
end)(), "gpt-oss-20b-bf16", "bf16/config.json")
tap.is(transformer.checkpoint_bytes(bf16), 2 * counts(bf16),
    "gpt-oss without quantization_config: a BF16 checkpoint")

-- GLM-4.5: dense first layers, a shared expert, q/k/v biases, per-head Q/K norms.
local glm = models["glm-4.5"]
tap.ok(by_name(glm, "model.layers.2.mlp.gate_proj.weight").role == "dense_ffn"
    and shape(by_name(glm, "model.layers.3.mlp.shared_experts.up_proj.weight")) == "1536x5120"
    and by_name(glm, "model.layers.3.mlp.gate.e_score_correction_bias").dtype == "fp32",
    "glm-4.5: 3 dense layers, then MoE with a shared expert and an FP32 score bias")
tap.ok(by_name(glm, p0 .. "self_attn.k_proj.bias") and not by_name(glm, p0 .. "self_attn.o_proj.bias")
    and shape(by_name(glm, p0 .. "self_attn.q_norm.weight")) == "128",
    "glm-4.5: q/k/v biases, none on o_proj, per-head Q/K norms")
tap.is(by_name(models["glm-4.5-air"], p0 .. "self_attn.q_norm.weight"), nil,
    "glm-4.5-air: no Q/K norm (use_qk_norm false)")

tap.is(shape(by_name(models["mixtral-8x7b"], "model.layers.31.block_sparse_moe.experts.{0..7}.w1.weight")),
    "8x14336x4096", "mixtral: Mixtral's module names, experts stacked")

-- DeepSeek-V3.2: V3 plus 5 indexer tensors per layer.
local v32 = models["deepseek-v3.2"]
local ix = "model.layers.10.self_attn.indexer."
tap.ok(shape(by_name(v32, ix .. "wq_b.weight")) == "8192x1536"
    and shape(by_name(v32, ix .. "wk.weight")) == "128x7168"
    and shape(by_name(v32, ix .. "k_norm.bias")) == "128"
    and shape(by_name(v32, ix .. "weights_proj.weight")) == "64x7168",
    "deepseek-v3.2: the lightning indexer's wq_b, wk, k_norm and weights_proj")
local v3 = refit.load_model(hf_dir .. "deepseek-v3/config.json")
tap.is(#v32.tensors - #v3.tensors, 61 * 5, "deepseek-v3.2: 5 indexer tensors per layer")
tap.is(counts(v32) - counts(v3), 61 * (8192 * 1536 + 128 * 7168 + 2 * 128 + 64 * 7168),
    "deepseek-v3.2: V3 plus the indexer, to the parameter")

-- Llama 4: nested text_config, checkpoint names under language_model., MoE interleaving.
local scout, maverick = models["llama-4-scout"], models["llama-4-maverick"]
local lp = "language_model.model.layers."
tap.ok(scout.name == "llama-4-scout-language" and scout.part == "language"
    and scout.tensors[1].name == "language_model.model.embed_tokens.weight"
    and scout.tensors[#scout.tensors].name == "language_model.lm_head.weight",
    "llama-4-scout: the language model by default, named so, under language_model.")
tap.ok(shape(by_name(scout, lp .. "0.feed_forward.experts.gate_up_proj")) == "16x16384x5120"
    and shape(by_name(scout, lp .. "47.feed_forward.shared_expert.down_proj.weight"))
        == "5120x8192", "llama-4-scout: every layer MoE, fused experts and a shared expert")
tap.ok(shape(by_name(maverick, lp .. "0.feed_forward.gate_proj.weight")) == "16384x5120"
    and by_name(maverick, lp .. "1.feed_forward.router.weight") ~= nil
    and by_name(maverick, lp .. "0.feed_forward.router.weight") == nil,
    "llama-4-maverick: MoE on every second layer, the others dense of intermediate_size_mlp")
local scout_v = refit.load_model({ path = hf_dir .. "llama-4-scout", part = "vision" })
tap.ok(scout_v.name == "llama-4-scout-vision" and scout_v.part == "vision"
    and scout_v.layers == 34 and scout_v.family == "llama4",
    "llama-4-scout: part = 'vision' gives the vision tower, named so")
tap.ok(shape(by_name(scout_v, "vision_model.positional_embedding_vlm")) == "577x1408"
    and shape(by_name(scout_v, "vision_model.vision_adapter.mlp.fc1.weight")) == "4096x5632"
    and shape(by_name(scout_v, "multi_modal_projector.linear_1.weight")) == "5120x4096",
    "llama-4-scout vision: positions, pixel-shuffle adapter, projector into the text model")
tap.near(counts(scout) + counts(scout_v), 109e9, 0.005,
    "llama-4-scout: language model and vision tower make the published 109B")
local text_only = refit.model_from_hf(require("json").decode(assert(io.open(hf_dir
    .. "llama-4-scout/config.json")):read("a")).text_config, "scout-text", "text/config.json")
tap.ok(text_only.family == "llama4_text" and counts(text_only) == counts(scout)
    and text_only.tensors[1].name == "model.embed_tokens.weight",
    "llama4_text alone (Llama4ForCausalLM): the same model under model.")

-- Kimi K2.5: Kimi K2's model, under language_model.
local k25, k2 = models["kimi-k2.5"], refit.load_model(hf_dir .. "kimi-k2/config.json")
local same = #k25.tensors == #k2.tensors
for i, t in ipairs(k2.tensors) do
    same = same and k25.tensors[i].name == "language_model." .. t.name
        and shape(k25.tensors[i]) == shape(t)
end
tap.ok(same, "kimi-k2.5: Kimi K2's tensors, each under language_model.")

local mm = models["minimax-m2"]
tap.ok(shape(by_name(mm, p0 .. "self_attn.q_norm.weight")) == "6144"
    and by_name(mm, p0 .. "self_attn.k_norm.weight").class == "column"
    and by_name(mm, p0 .. "block_sparse_moe.e_score_correction_bias").dtype == "fp32",
    "minimax-m2: Q/K norms over the whole projection, split with the heads; FP32 score bias")

-- Qwen3-Next: 36 Gated DeltaNet layers, 12 gated full-attention layers.
local next80 = models["qwen3-next-80b-a3b"]
local linear, full = 0, 0
for _, t in ipairs(next80.tensors) do
    linear = linear + (t.name:match("linear_attn%.out_proj") and 1 or 0)
    full = full + (t.name:match("self_attn%.o_proj") and 1 or 0)
end
tap.is(linear .. "/" .. full, "36/12", "qwen3-next: a full-attention layer every 4th")
tap.ok(shape(by_name(next80, "model.layers.3.self_attn.q_proj.weight")) == "8192x2048"
    and shape(by_name(next80, p0 .. "linear_attn.in_proj_qkvz.weight")) == "12288x2048"
    and shape(by_name(next80, p0 .. "linear_attn.conv1d.weight")) == "8192x1x4"
    and by_name(next80, p0 .. "linear_attn.A_log").dtype == "fp32"
    and shape(by_name(next80, p0 .. "mlp.shared_expert_gate.weight")) == "1x2048",
    "qwen3-next: gated q_proj, Gated DeltaNet projections and conv, FP32 A_log, shared gate")
local next_cfg = require("json").decode(assert(io.open(hf_dir
    .. "qwen3-next-80b-a3b/config.json")):read("a"))
next_cfg.full_attention_interval = nil
next_cfg.layer_types = {}
for i = 1, 48 do
    next_cfg.layer_types[i] = i % 4 == 0 and "full_attention" or "linear_attention"
end
tap.is(counts(refit.model_from_hf(next_cfg, "n", "n/config.json")), counts(next80),
    "qwen3-next: transformers 5's layer_types gives the same model")

local nano = models["nemotron-nano-12b-v2"]
tap.ok(shape(by_name(nano, "backbone.layers.0.mixer.in_proj.weight")) == "22656x5120"
    and shape(by_name(nano, "backbone.layers.0.mixer.conv1d.weight")) == "12288x1x4"
    and by_name(nano, "backbone.layers.1.mixer.gate_proj.weight") == nil
    and shape(by_name(nano, "backbone.layers.7.mixer.k_proj.weight")) == "1024x5120"
    and by_name(nano, "backbone.norm_f.weight") ~= nil,
    "nemotron_h: Mamba-2 in_proj (z, x, B, C, dt) and conv1d, ReLU^2 MLPs, attention at '*'")
local n3 = models["nemotron-3-nano-30b-a3b"]
tap.ok(n3.experts == 128 and shape(by_name(n3, "backbone.layers.1.mixer.experts.{0..127}.up_proj.weight")) == "128x1856x2688" and by_name(n3, "backbone.layers.1.mixer.experts.{0..127}.gate_proj.weight")
    == nil and shape(by_name(n3, "backbone.layers.1.mixer.shared_experts.up_proj.weight")) == "3712x2688"
    and by_name(n3, "backbone.layers.1.mixer.gate.e_score_correction_bias") ~= nil,
    "nemotron_h (Nemotron 3): E layers of 128 ungated experts, a score bias, one shared MLP")
tap.ok(by_name(models["gemma-3-1b"], p0 .. "pre_feedforward_layernorm.weight") ~= nil
    and by_name(models["gemma-3-1b"], p0 .. "self_attn.q_norm.weight") ~= nil
    and by_name(models["gemma-3-1b"], "lm_head.weight") == nil
    and by_name(models["gemma-3-27b"], "language_model.model.layers.0.post_feedforward_layernorm.weight") ~= nil,
    "gemma3: four norms per layer, Q/K norms, tied embeddings; the 27B's language model nested")
tap.ok(by_name(models["qwen2.5-7b"], p0 .. "self_attn.v_proj.bias") ~= nil
    and by_name(models["qwen2.5-7b"], p0 .. "self_attn.o_proj.bias") == nil,
    "qwen2: q/k/v biases, none on o_proj")
tap.ok(by_name(models["deepseek-v2-lite"], "model.layers.1.mlp.gate.e_score_correction_bias")
    == nil and by_name(models["deepseek-v2-lite"], p0 .. "self_attn.q_proj.weight") ~= nil,
    "deepseek-v2-lite: greedy routing has no score bias; no q_lora_rank, one q_proj")

-- transformers 5: a re-saved Qwen3-30B-A3B is models/qwen3-30b-a3b.lua's model.
local tf5, file_model = models["qwen3-30b-a3b-tf5"], refit.load_model("qwen3-30b-a3b")
local tf5_same = #tf5.tensors == #file_model.tensors
for i, t in ipairs(file_model.tensors) do
    tf5_same = tf5_same and tf5.tensors[i].name == t.name and shape(tf5.tensors[i]) == shape(t)
end
tap.ok(tf5_same, "transformers 5 (num_local_experts, rope_parameters): same tensors as the "
    .. "model file")

-- Folders: a snapshot folder and a cache folder are models.
local snap = refit.load_model(hf_dir .. "llama3-8b")
tap.ok(snap.name == "llama3-8b" and snap.source == hf_dir .. "llama3-8b/config.json"
    and #snap.tensors == 291, "a snapshot folder is read through its config.json")
tap.is(refit.load_model(hf_dir .. "llama3-8b/").name, "llama3-8b", "a trailing '/' too")
local cache = data .. "/hf-cache/"
local tiny = refit.load_model(cache .. "models--acme--tiny-llama")
tap.ok(tiny.name == "tiny-llama" and tiny.layers == 2
    and tiny.source == cache .. "models--acme--tiny-llama/snapshots/0123abcd/config.json",
    "a cache folder: the snapshot refs/main names, named after the repository")
tap.is(refit.load_model(cache .. "models--acme--tiny-llama/snapshots/4567ef01").name,
    "tiny-llama", "a snapshot inside a cache folder is named after the repository too")
tap.is(refit.load_model(cache .. "models--acme--one").source,
    cache .. "models--acme--one/snapshots/89abcdef/config.json",
    "a cache folder without refs/main: its only snapshot")

-- A scenario names a folder and a part; the name says which part it planned.
local s = refit.load_scenario_table({ source = data .. "/x.lua", line = 1, base_dir = data,
    table = { model = { path = "hf/llama-4-maverick", part = "vision" },
              cluster = { system = "dgx-h100", nodes = 2 },
              train = { gpus = 8, tp = 8 }, infer = { gpus = 8, first_gpu = 8, tp = 4 } } })
tap.is(s.model.name, "llama-4-maverick-vision", "a scenario plans a vision tower from a folder")
local beside = refit.load_scenario_table({ source = data .. "/hf-cache/x.lua", line = 1,
    base_dir = data .. "/hf-cache", table = { model = "models--acme--one",
        cluster = { system = "dgx-h100", nodes = 2 },
        train = { gpus = 8, tp = 2 }, infer = { gpus = 8, first_gpu = 8, tp = 2 } } })
tap.is(beside.model.name, "one", "a bare name that is no model file may be a folder beside "
    .. "the scenario")

tap.done()
