-- hf.lua: build a model from a decoded Hugging Face config.json (deepseek_v3, kimi_k2, qwen3,
-- qwen3_moe, llama) through the transformer constructors.

-- Field names and defaults are transformers' (configuration_*.py); a field refit needs and
-- transformers has no default for must be present. JSON has no line information, so errors
-- name line 0: "<config.json>:0: hidden_size: missing". The MTP layers of DeepSeek-V3
-- (num_nextn_predict_layers) are not part of the model, as in transformers.

local schema = require("schema")
local transformer = require("transformer")

local hf = {}

local JSON_NAMES

-- Sizes are bounded as the constructors bound them (schema.MAX_MODEL_SIZE), so the error
-- names the JSON field.
local function positive(required, default)
    return { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, required = required,
             default = default }
end

local function count(required)
    return { type = "integer", min = 0, max = schema.MAX_MODEL_SIZE, required = required }
end

local COMMON = {
    model_type = { type = "string", required = true },
    hidden_size = positive(true),
    num_hidden_layers = positive(true),
    vocab_size = positive(true),
    num_attention_heads = positive(true),
    tie_word_embeddings = { type = "boolean", default = false },
}

-- Per model_type: the fields read (besides COMMON) and the mapping to a constructor.
local FAMILIES = {}

local function gqa_fields(extra)
    local fields = {
        num_key_value_heads = positive(false),
        head_dim = positive(false),
        attention_bias = { type = "boolean", default = false },
    }
    for k, v in pairs(extra) do
        fields[k] = v
    end
    return fields
end

local function gqa(c, qk_norm)
    return { kind = "gqa", heads = c.num_attention_heads, kv_heads = c.num_key_value_heads,
             head_dim = c.head_dim, qk_norm = qk_norm }
end

local function base(c, name)
    return { name = name, family = c.model_type, hidden = c.hidden_size,
             layers = c.num_hidden_layers, vocab = c.vocab_size,
             tie_embeddings = c.tie_word_embeddings }
end

FAMILIES.llama = {
    fields = gqa_fields({ intermediate_size = positive(true),
                          mlp_bias = { type = "boolean", default = false } }),
    build = function(c, name)
        local spec = base(c, name)
        spec.attention, spec.intermediate = gqa(c, false), c.intermediate_size
        return "dense", spec
    end,
}

FAMILIES.qwen3 = {
    fields = gqa_fields({ intermediate_size = positive(true) }),
    build = function(c, name)
        local spec = base(c, name)
        spec.attention, spec.intermediate = gqa(c, true), c.intermediate_size
        return "dense", spec
    end,
}

FAMILIES.qwen3_moe = {
    fields = gqa_fields({
        num_experts = positive(true),
        num_experts_per_tok = positive(true),
        moe_intermediate_size = positive(true),
        decoder_sparse_step = positive(false, 1),
        mlp_only_layers = { type = "table", default = {} },
    }),
    build = function(c, name)
        local spec = base(c, name)
        spec.attention = gqa(c, true)
        spec.moe = { experts = c.num_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size }
        return "moe", spec
    end,
}

-- deepseek_v3 and kimi_k2 share DeepSeek-V3's modelling code; its router always carries
-- e_score_correction_bias.
FAMILIES.deepseek_v3 = {
    fields = {
        q_lora_rank = positive(false),
        kv_lora_rank = positive(true),
        qk_nope_head_dim = positive(true),
        qk_rope_head_dim = positive(true),
        v_head_dim = positive(true),
        intermediate_size = positive(true),
        moe_intermediate_size = positive(true),
        n_routed_experts = positive(true),
        n_shared_experts = count(true),
        num_experts_per_tok = positive(true),
        first_k_dense_replace = count(true),
        moe_layer_freq = positive(false, 1),
    },
    build = function(c, name)
        local spec = base(c, name)
        spec.attention = { kind = "mla", heads = c.num_attention_heads,
                           q_lora_rank = c.q_lora_rank, kv_lora_rank = c.kv_lora_rank,
                           qk_nope_head_dim = c.qk_nope_head_dim,
                           qk_rope_head_dim = c.qk_rope_head_dim, v_head_dim = c.v_head_dim }
        spec.dense = { layers = c.first_k_dense_replace, intermediate = c.intermediate_size }
        spec.moe = { experts = c.n_routed_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size,
                     shared_experts = c.n_shared_experts, router_bias = true }
        return "moe", spec
    end,
}
FAMILIES.kimi_k2 = FAMILIES.deepseek_v3

-- Layer patterns and biases refit does not map yet: refuse rather than undercount.
local UNSUPPORTED = {
    { field = "attention_bias", bad = true, why = "attention biases are not modelled" },
    { field = "mlp_bias", bad = true, why = "MLP biases are not modelled" },
    { field = "moe_layer_freq", differs = 1, why = "only every-layer MoE is modelled" },
    { field = "decoder_sparse_step", differs = 1, why = "only every-layer MoE is modelled" },
}

-- The config.json key of a constructor field, for errors the constructors raise.
JSON_NAMES = {
    layers = "num_hidden_layers",
    ["attention.head_dim"] = "head_dim",
    ["attention.kv_heads"] = "num_key_value_heads",
    ["moe.experts_per_token"] = "num_experts_per_tok",
    ["dense.layers"] = "first_k_dense_replace",
}

local function supported_types()
    local names = {}
    for k in pairs(FAMILIES) do
        names[#names + 1] = k
    end
    table.sort(names)
    return table.concat(names, ", ")
end

-- Maps a decoded config.json to a normalised model. `name` names the model, `source` is
-- the path of the JSON file (used in errors and as the model's source).
function hf.model(cfg, name, source)
    -- Relations the constructors check name the config.json key they come from.
    local site = { file = source, line = 0, scan = false, names = JSON_NAMES }
    -- JSON null (refit.json.null) means "not set", like an absent field: DeepSeek-V2-Lite
    -- writes "q_lora_rank": null.
    local has_json, json = pcall(require, "refit.json")
    local null = has_json and json.null
    if cfg == null and null ~= nil then
        schema.raise(site, "config", "expected a JSON object, got null")
    elseif type(cfg) ~= "table" then
        schema.raise(site, "config", "expected a JSON object, got " .. schema.describe(cfg))
    end
    -- A JSON array decodes to a table with keys 1..n; an object's keys are strings.
    for k in pairs(cfg) do
        if type(k) ~= "string" then
            schema.raise(site, "config", "expected a JSON object, got an array")
        end
    end
    local plain = {}
    for k, v in pairs(cfg) do
        if v ~= null then
            plain[k] = v
        end
    end
    local family = FAMILIES[plain.model_type]
    if plain.model_type ~= nil and not family then
        schema.raise(site, "model_type", string.format("%s is not supported (supported: %s)",
            schema.describe(plain.model_type), supported_types()))
    end
    local fields = {}
    for k, v in pairs(COMMON) do
        fields[k] = v
    end
    for k, v in pairs(family and family.fields or {}) do
        fields[k] = v
    end
    local c = schema.validate(plain, { type = "record", open = true, fields = fields }, site, "")
    for _, u in ipairs(UNSUPPORTED) do
        local v = c[u.field]
        if v ~= nil and (v == u.bad or (u.differs and v ~= u.differs)) then
            schema.raise(site, u.field, string.format("%s is not supported: %s",
                schema.describe(v), u.why))
        end
    end
    if c.mlp_only_layers and next(c.mlp_only_layers) ~= nil then
        schema.raise(site, "mlp_only_layers", "dense layers among MoE layers are not supported")
    end
    local kind, spec = family.build(c, name)
    return transformer.make(kind, spec, site)
end

return hf
