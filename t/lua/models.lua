-- models.lua: TAP tests of the model files, the constructors, the layouts, scenarios and
-- the Hugging Face config mapping. Usage: lua5.4 t/lua/models.lua <models-dir>

package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local tap = require("tap")
local refit, data, root = tap.setup()

local numel, counts, by_name, shape = tap.numel, tap.counts, tap.by_name, tap.shape

local function list(t)
    return table.concat(t, ",")
end

-- Published or models.md [computed] figures; Kimi K3 and Qwen3.8 are the sizes the
-- extrapolations must hit (2% total, 5% active).
local EXPECTED = {
    { "deepseek-v3", 671.03e9, 0.005, 37.55e9, 0.005 },
    { "kimi-k2", 1026.4e9, 0.005, 32.86e9, 0.005 },
    { "qwen3-235b-a22b", 235.09e9, 0.005, 22.19e9, 0.005 },
    { "qwen3-30b-a3b", 30.53e9, 0.005, 3.35e9, 0.005 },
    { "qwen3-8b", 8.191e9, 0.005 },
    { "qwen3-32b", 32.762e9, 0.005 },
    { "llama3-8b", 8.030e9, 0.005 },
    { "llama3-70b", 70.554e9, 0.005 },
    { "llama3-405b", 405.853e9, 0.005 },
    { "kimi-k3", 2.8e12, 0.02 },
    { "qwen3.8-2.4t-a95b", 2.4e12, 0.02, 95e9, 0.05 },
}

local ROLES = { embedding = true, attention = true, dense_ffn = true, expert = true,
                shared_expert = true, router = true, norm = true, lm_head = true }
local CLASSES = { column = true, row = true, vocab = true, replicated = true,
                  expert_column = true, expert_row = true }

-- Contract invariants of one tensor; returns nil or what is wrong.
local function tensor_problem(model, t)
    if not ROLES[t.role] then
        return "role " .. tostring(t.role)
    elseif not CLASSES[t.class] then
        return "class " .. tostring(t.class)
    elseif t.dtype ~= "bf16" and t.dtype ~= "fp32" then
        return "dtype " .. tostring(t.dtype)
    elseif #t.shape < 1 or #t.shape > 3 then
        return "rank " .. #t.shape
    elseif t.layer < -1 or t.layer > model.layers then
        return "layer " .. t.layer
    elseif (t.class:match("^expert_") ~= nil) ~= (t.experts > 0) then
        return "experts " .. t.experts .. " with class " .. t.class
    elseif t.experts > 0 and (t.shape[1] ~= t.experts or #t.shape ~= 3
        or not t.name:find("{0.." .. (t.experts - 1) .. "}", 1, true)) then
        return "stacked shape or name"
    elseif t.quant ~= (#t.shape == 2 and t.role ~= "embedding" and t.role ~= "lm_head"
        and t.role ~= "router" or t.experts > 0) then
        return "quant " .. tostring(t.quant)
    end
    return nil
end

local models = {}
for _, e in ipairs(EXPECTED) do
    local name, total_want, total_tol, active_want, active_tol = table.unpack(e)
    local ok, model = pcall(refit.load_model, name)
    if tap.ok(ok, name .. ": loads", model) then
        models[name] = model
        local total, active = counts(model)
        tap.near(total, total_want, total_tol, string.format("%s: %.2fB parameters in total",
            name, total / 1e9))
        if active_want then
            tap.near(active, active_want, active_tol, string.format("%s: %.2fB active",
                name, active / 1e9))
        end
        tap.is(model.name, name, name .. ": name")
        tap.is(model.source, refit.models_dir .. "/" .. name .. ".lua", name .. ": source")
        local problems, seen = {}, {}
        for _, t in ipairs(model.tensors) do
            local problem = tensor_problem(model, t)
            if seen[t.name] then
                problem = "duplicate name"
            end
            seen[t.name] = true
            if problem then
                problems[#problems + 1] = t.name .. ": " .. problem
            end
        end
        tap.ok(#problems == 0, name .. ": every tensor meets the contract",
            table.concat(problems, "\n"))
        tap.ok(model.tensors[1].name == "model.embed_tokens.weight"
            and model.tensors[#model.tensors].name == "lm_head.weight",
            name .. ": embed_tokens first, lm_head last")
    end
end

local dsv3, k3 = models["deepseek-v3"], models["kimi-k3"]

-- Tensor counts: embed + per layer (2 norms + attention + FFN) + final norm + lm_head.
-- DeepSeek-V3: MLA 7, dense FFN 3, MoE 2 router + 3 stacked + 3 shared.
tap.is(#dsv3.tensors, 1 + 3 * (2 + 7 + 3) + 58 * (2 + 7 + 8) + 2, "deepseek-v3: tensor count")
tap.is(#models["qwen3-8b"].tensors, 1 + 36 * (2 + 6 + 3) + 2, "qwen3-8b: tensor count")
tap.is(#models["llama3-8b"].tensors, 1 + 32 * (2 + 4 + 3) + 2, "llama3-8b: tensor count")
tap.is(#models["qwen3-235b-a22b"].tensors, 1 + 94 * (2 + 6 + 4) + 2,
    "qwen3-235b-a22b: tensor count")

tap.is(dsv3.layers .. "/" .. dsv3.experts .. "/" .. dsv3.experts_per_token, "61/256/8",
    "deepseek-v3: layers, experts, experts per token")
tap.is(dsv3.family, "deepseek_v3", "deepseek-v3: family")
tap.is(shape(by_name(dsv3, "model.layers.3.self_attn.q_b_proj.weight")), "24576x1536",
    "deepseek-v3: q_b_proj shape")
tap.is(shape(by_name(dsv3, "model.layers.60.self_attn.kv_b_proj.weight")), "32768x512",
    "deepseek-v3: kv_b_proj shape")
local gate = by_name(dsv3, "model.layers.3.mlp.experts.{0..255}.gate_proj.weight")
tap.is(shape(gate), "256x2048x7168", "deepseek-v3: stacked expert gate_proj shape")
tap.ok(gate and gate.class == "expert_column" and gate.role == "expert"
    and gate.experts == 256 and gate.quant, "deepseek-v3: stacked gate_proj is expert_column")
local down = by_name(dsv3, "model.layers.60.mlp.experts.{0..255}.down_proj.weight")
tap.ok(down and shape(down) == "256x7168x2048" and down.class == "expert_row",
    "deepseek-v3: stacked down_proj is [256, 7168, 2048] expert_row")
tap.ok(by_name(dsv3, "model.layers.2.mlp.experts.{0..255}.gate_proj.weight") == nil
    and by_name(dsv3, "model.layers.2.mlp.gate_proj.weight").role == "dense_ffn",
    "deepseek-v3: layers 0-2 are dense")
local bias = by_name(dsv3, "model.layers.3.mlp.gate.e_score_correction_bias")
tap.ok(bias and bias.dtype == "fp32" and bias.role == "router" and bias.class == "replicated"
    and not bias.quant and shape(bias) == "256", "deepseek-v3: router bias is fp32, replicated")
local shared = by_name(dsv3, "model.layers.3.mlp.shared_experts.down_proj.weight")
tap.ok(shared and shape(shared) == "7168x2048" and shared.role == "shared_expert"
    and shared.class == "row", "deepseek-v3: shared expert down_proj is a 2-D row tensor")
tap.is(by_name(dsv3, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight").class,
    "replicated", "deepseek-v3: kv_a_proj_with_mqa is replicated")
tap.is(by_name(dsv3, "lm_head.weight").layer, 61, "deepseek-v3: lm_head on layer 61")

tap.is(shape(by_name(k3, "model.layers.1.mlp.shared_experts.gate_proj.weight")), "6144x7168",
    "kimi-k3: two shared experts are one 6144-wide shared expert")
tap.is(shape(by_name(k3, "model.layers.1.mlp.experts.{0..895}.up_proj.weight")),
    "896x3072x3584", "kimi-k3: routed experts compute in the 3584 latent")
tap.near(counts(k3) * 2, 5.6e12, 0.02, "kimi-k3: about 5.6 TB in BF16")
tap.is(shape(by_name(models["qwen3-235b-a22b"], "model.layers.0.self_attn.k_proj.weight")),
    "512x4096", "qwen3-235b-a22b: k_proj shape")
tap.is(shape(by_name(models["llama3-405b"], "model.layers.125.mlp.gate_proj.weight")),
    "53248x16384", "llama3-405b: gate_proj shape")
tap.is(models["qwen3-8b"].experts, 0, "qwen3-8b: dense models have 0 experts")

-- Layouts, through scenarios.
local s = refit.load_scenario(root .. "/scripts/dsv3-h100.lua")
tap.is(list(s.train.stage_layers), "3,4,4,4,4,4,4,4,4,4,4,4,4,4,4,2",
    "dsv3-h100: Megatron PP16 stages 3, 4 x 14, 2")
tap.ok(s.train.dp == 16 and s.train.edp == 1 and s.train.tp == 1 and s.train.cp == 1
    and s.train.etp == 1 and s.train.fsdp == false and s.train.dtype == "bf16"
    and s.train.first_gpu == 0, "dsv3-h100: train dp 16, edp 1, defaults")
tap.ok(s.infer.replicas == 8 and s.infer.pp == 1 and s.infer.dp == 1
    and s.infer.first_gpu == 256 and list(s.infer.stage_layers) == "61",
    "dsv3-h100: infer 8 replicas of TP32, one stage")
tap.ok(s.strategy == "reshard" and s.source == root .. "/scripts/dsv3-h100.lua"
    and s.cluster.name == "dgx-h100" and s.cluster.nodes == 64
    and s.model.name == "deepseek-v3", "dsv3-h100: strategy, source, cluster, model")
tap.ok(#s.tensor_strategy == #s.model.tensors and s.tensor_strategy[1] == "reshard"
    and s.tensor_strategy[#s.tensor_strategy] == "reshard",
    "dsv3-h100: every tensor reshards")

local k = refit.load_scenario(root .. "/scripts/kimi-k3-bench.lua")
tap.ok(k.train.dp == 16 and k.train.edp == 2
    and list(k.train.stage_layers) == "5,6,6,6,6,6,6,6,6,6,6,6,6,6,6,4"
    and k.infer.replicas == 256 and k.infer.ep == 16,
    "kimi-k3-bench: train dp 16, edp 2, stages 5, 6 x 14, 4; infer 256 replicas")

local layouts = refit.load_scenario(data .. "/good/layouts.lua")
tap.is(list(layouts.train.stage_layers), "7,8,8,8,8,8,8,6",
    "Megatron PP8 of 61 layers: first 7, last 6")
tap.is(list(layouts.infer.stage_layers), "7,7,8,8,8,8,8,7",
    "vLLM PP8 of 61 layers: the remainder goes to the stages before the last")
tap.ok(layouts.infer.dp == 4 and layouts.infer.ep == 32 and layouts.infer.replicas == 2,
    "vLLM DP attention: ep = tp*dp, replicas = gpus/(tp*pp*dp)")
tap.ok(layouts.train.first_gpu == 0 and layouts.infer.first_gpu == 0,
    "colocated sides may share GPUs")

local verl = refit.load_scenario(data .. "/good/pp-first-last.lua")
tap.is(list(verl.train.stage_layers), "4,4,4,4,4,4,4,4,4,4,4,4,4,4,4,1",
    "pp_first 4 / pp_last 1 (verl's DeepSeek-V3 PP16)")

local hybrid = refit.load_scenario(data .. "/good/hybrid.lua")
local want, default_ok = {}, true
for i, t in ipairs(hybrid.model.tensors) do
    want = (t.role == "dense_ffn" or t.role == "expert") and "reshard" or "broadcast"
    default_ok = default_ok and hybrid.tensor_strategy[i] == want
end
tap.ok(default_ok, "hybrid: default policy reshards dense FFN and routed experts only")
local custom = refit.load_scenario(data .. "/good/hybrid-policy.lua")
local custom_ok = true
for i, t in ipairs(custom.model.tensors) do
    want = t.name:find("mlp", 1, true) and "reshard" or "broadcast"
    custom_ok = custom_ok and custom.tensor_strategy[i] == want
end
tap.ok(custom_ok, "hybrid: a scenario's policy decides per tensor")

local inline = refit.load_scenario(data .. "/good/inline-model.lua")
tap.ok(inline.model.name == "tiny" and inline.model.source == data .. "/good/inline-model.lua"
    and #inline.model.tensors == 1 + 2 * 9 + 2, "a scenario may build its model inline")
local included = refit.load_model(data .. "/good/include.lua")
tap.is(included.name, "qwen3-8b", "include() loads another model file")
local again = refit.load_model(dsv3)
tap.ok(again ~= dsv3 and #again.tensors == #dsv3.tensors and again.tensors[5].name
    == dsv3.tensors[5].name and again.attention.heads == 128,
    "load_model returns a checked copy of a built model")
tap.is(refit.load_model(data .. "/good/tiny.lua").name, "tiny", "load_model takes a .lua path")

-- Hugging Face configs: the same model from config.json as from the model file.
local configs = dofile(data .. "/hf/configs.lua")
local json_ok, json = pcall(require, "refit.json")

-- Deep equality where JSON null equals absent.
local function same(a, b, null)
    if a == null then
        a = nil
    end
    if b == null then
        b = nil
    end
    if type(a) ~= "table" or type(b) ~= "table" then
        return a == b
    end
    for key, v in pairs(a) do
        if not same(v, b[key], null) then
            return false
        end
    end
    for key, v in pairs(b) do
        if a[key] == nil and v ~= null then
            return false
        end
    end
    return true
end

local function same_tensors(a, b)
    if #a.tensors ~= #b.tensors then
        return false, string.format("%d tensors, want %d", #a.tensors, #b.tensors)
    end
    for i, t in ipairs(a.tensors) do
        local u = b.tensors[i]
        for _, key in ipairs({ "name", "dtype", "role", "layer", "class", "experts", "quant" }) do
            if t[key] ~= u[key] then
                return false, string.format("%s.%s: %s, want %s", t.name, key,
                    tostring(t[key]), tostring(u[key]))
            end
        end
        if shape(t) ~= shape(u) then
            return false, t.name .. ": shape " .. shape(t) .. ", want " .. shape(u)
        end
    end
    return true
end

for _, name in ipairs({ "deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "qwen3-8b", "llama3-8b" }) do
    local path = data .. "/hf/" .. name .. "/config.json"
    local cfg = configs[name]
    if json_ok then
        local f = assert(io.open(path, "r"))
        local decoded = json.decode(f:read("a"))
        f:close()
        tap.ok(same(decoded, cfg, json.null), name .. ": config.json matches configs.lua")
        cfg = decoded
    end
    local ok, model = pcall(refit.model_from_hf, cfg, name, path)
    if tap.ok(ok, name .. ": model_from_hf maps " .. tostring(configs[name].model_type), model)
    then
        tap.ok(same_tensors(model, models[name]), name .. ": same tensors as the model file",
            select(2, same_tensors(model, models[name])))
        tap.ok(model.source == path and model.family == configs[name].model_type
            and model.experts == models[name].experts
            and model.experts_per_token == models[name].experts_per_token,
            name .. ": source, family and experts from the config")
    end
end

-- Tied embeddings (Qwen3 0.6B-4B): no lm_head tensor.
local tied = {}
for key, v in pairs(configs["qwen3-8b"]) do
    tied[key] = v
end
tied.tie_word_embeddings = true
local tied_model = refit.model_from_hf(tied, "qwen3-tied", "tied/config.json")
tap.ok(by_name(tied_model, "lm_head.weight") == nil
    and #tied_model.tensors == #models["qwen3-8b"].tensors - 1,
    "tie_word_embeddings: no lm_head tensor")

if json_ok then
    tap.is(refit.load_model(data .. "/hf/llama3-8b/config.json").name, "llama3-8b",
        "load_model reads a config.json, named after its directory")
else
    tap.raises(function()
        refit.load_model(data .. "/hf/llama3-8b/config.json")
    end, data .. "/hf/llama3-8b/config.json:0: model: reading " .. data
        .. "/hf/llama3-8b/config.json needs the JSON decoder of the refit command "
        .. "(module refit.json)", "without refit.json, a config.json is refused clearly")
end

-- Bounds and TP rules accept what real deployments use.
local function scenario_table(t)
    return refit.load_scenario_table({ table = t, source = "t.lua", line = 1, base_dir = data })
end
local function qwen8b(infer_tp, train_tp)
    return scenario_table({ model = "qwen3-8b", cluster = { system = "dgx-h100", nodes = 8 },
        train = { gpus = 32, tp = train_tp },
        infer = { gpus = 32, first_gpu = 32, tp = infer_tp } })
end
tap.ok(pcall(qwen8b, 16, 8), "vLLM replicates 8 KV heads over tp = 16; Megatron splits them over 8")
tap.ok(pcall(qwen8b, 32, 1), "tp = 32 = the heads of qwen3-8b (KV heads replicated 4 times)")
local big_cluster = scenario_table({ model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 100000 },
    train = { gpus = 1 }, infer = { gpus = 1, first_gpu = 799999 } })
tap.is(big_cluster.cluster.nodes, 100000, "a cluster of 800,000 GPUs is accepted for 2 GPUs")
local exact = scenario_table({ model = "qwen3-8b", cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8.0 }, infer = { gpus = 2^3, first_gpu = 8 }, staging_mb = 20000 })
tap.ok(math.type(exact.infer.gpus) == "integer" and exact.staging_bytes == 20000000000,
    "integral floats are sizes; 2 x 20 GB of staging fit in 80 GB")

-- Placement (layout.place): engines that do not divide the NVLink domain are placed domain
-- by domain, the span counting the idle GPUs; packed, or engines that divide it, span gpus.
local function placed(path)
    local p = refit.load_scenario(root .. "/scripts/" .. path .. ".lua")
    local i = p.infer
    return string.format("%s %d %d %d %d", i.placement, i.domain_gpus, i.gpus, i.span,
        i.per_domain)
end
tap.is(placed("dsv3-gb200"), "domain 72 128 136 2",
    "dsv3-gb200: TP32 engines 2 per 72-GPU rack, 8 idle in the first: span 72 + 64")
tap.is(placed("kimi-k3-gb200"), "domain 72 4096 4600 1",
    "kimi-k3-gb200: 64 engines of 64, one per rack: span 63 x 72 + 64")
tap.is(placed("qwen3-235b-gb200"), "domain 72 128 128 1",
    "qwen3-235b-gb200: TP8 divides 72, nothing changes")
local function gb200(infer)
    local t = scenario_table({ model = "deepseek-v3", cluster = { system = "gb200-nvl72",
        nodes = 72 }, train = { gpus = 128, pp = 8, ep = 16 }, infer = infer })
    return string.format("%s %d %d %d", t.infer.placement, t.infer.domain_gpus, t.infer.span,
        t.infer.per_domain)
end
tap.is(gb200({ gpus = 128, first_gpu = 144, tp = 32, placement = "packed" }), "packed 0 128 1",
    "placement = 'packed': back to back, as before")
tap.is(gb200({ gpus = 192, first_gpu = 0, tp = 32, dp = 3 }), "domain 72 240 1",
    "engines of 96 take 2 whole racks each: span 144 + 96")

local layout = require("layout")
local function place_text(...)
    local p, field, message = layout.engine_place(...)
    if not p then
        return field .. ": " .. message
    end
    return string.format("%s %d %d %d", tostring(p.gaps), p.per_domain, p.stride, p.span)
end
tap.is(place_text(64, 64, 2088, 72), "true 1 72 4600",
    "layout.engine_place: Kimi K3's 64 engines of 64, one per rack (sim/layout.c agrees)")
tap.is(place_text(16, 256, 2088, 72), "true 4 72 4600", "engines of 16: 4 per rack")
tap.is(place_text(8, 16, 144, 72), "false 1 8 128", "engines of 8 divide 72: packed")
tap.is(place_text(16, 6, 0, 72), "gpus: 6 engines of 16 GPUs do not fill domains of 72 GPUs "
    .. "evenly (4 engines per domain); use a multiple of 4 engines (64 GPUs), or set "
    .. "infer.placement = 'packed'", "layout.engine_place: the field and message, no raise")

-- Every shipped scenario still loads (those of scripts/ present in this tree).
for _, name in ipairs({ "dsv3-h100", "dsv3-gb200", "qwen3-235b-h100", "qwen3-235b-gb200",
                        "kimi-k3-gb200", "kimi-k3-bench" }) do
    local path = root .. "/scripts/" .. name .. ".lua"
    local f = io.open(path, "r")
    if f then
        f:close()
        local ok, err = pcall(refit.load_scenario, path)
        tap.ok(ok, "scripts/" .. name .. ".lua loads", err)
    end
end

tap.done()
