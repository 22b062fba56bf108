-- hf.lua: build a model from a decoded Hugging Face config.json (the model types of
-- hf_families.lua) through the transformer constructors, or its vision tower through vision.lua.

-- JSON has no line information, so errors name line 0 and the JSON field, dotted inside a
-- nested config: "<config.json>:0: text_config.hidden_size: missing". A multimodal
-- checkpoint (llama4, kimi_k25) nests its language model's config in text_config; by
-- default the language model is built, `options.part = "vision"` builds the vision tower
-- instead, and the model's name says which part it is (<name>-language, <name>-vision).

local schema = require("schema")
local transformer = require("transformer")
local vision = require("vision")
local families = require("hf_families")

local hf = {}

-- Sizes are bounded as the constructors bound them (schema.MAX_MODEL_SIZE), so the error
-- names the JSON field.
local COMMON = {
    model_type = { type = "string", required = true },
    hidden_size = { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, required = true },
    num_hidden_layers = { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE,
                          required = true },
    vocab_size = { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, required = true },
    num_attention_heads = { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE,
                            required = true },
    tie_word_embeddings = { type = "boolean", default = false },
}

-- Layer patterns and biases refit does not map: refuse rather than undercount.
local UNSUPPORTED = {
    { field = "mlp_bias", bad = true, why = "MLP biases are not modelled" },
    { field = "moe_layer_freq", differs = 1, why = "only every-layer MoE is modelled" },
}

-- The config.json key of a constructor field, for errors the constructors raise (a
-- family's `json` adds its own).
local JSON_NAMES = {
    layers = "num_hidden_layers",
    ["attention.head_dim"] = "head_dim",
    ["attention.kv_heads"] = "num_key_value_heads",
    ["moe.experts_per_token"] = "num_experts_per_tok",
    ["dense.layers"] = "first_k_dense_replace",
    ["dense.intermediate"] = "intermediate_size",
    ["dense.indices"] = "mlp_only_layers",
    ["moe.every"] = "decoder_sparse_step",
    ["linear_attention.full_every"] = "full_attention_interval",
}

-- A checkpoint's language model inside a multimodal checkpoint is stored under
-- language_model. (Llama 4's and Kimi K2.5's safetensors index).
local NESTED_NAMES = { prefix = "language_model.model.", lm_head = "language_model.lm_head.weight" }

function hf.supported_types()
    local names = {}
    for k in pairs(families) do
        names[#names + 1] = k
    end
    table.sort(names)
    return names
end

-- A JSON object as a plain table: refuses arrays and scalars as `field`, drops JSON nulls
-- (refit.json.null means "not set", like an absent field: DeepSeek-V2-Lite writes
-- "q_lora_rank": null) one level deep.
local function object(value, site, field, null)
    if value == null and null ~= nil then
        schema.raise(site, field, "expected a JSON object, got null")
    elseif type(value) ~= "table" then
        schema.raise(site, field, "expected a JSON object, got " .. schema.describe(value))
    end
    -- A JSON array decodes to a table with keys 1..n; an object's keys are strings.
    for k in pairs(value) do
        if type(k) ~= "string" then
            schema.raise(site, field, "expected a JSON object, got an array")
        end
    end
    local plain = {}
    for k, v in pairs(value) do
        if v ~= null then
            plain[k] = v
        end
    end
    return plain
end

local function join(prefix, field)
    return prefix == "" and field or prefix .. "." .. field
end

-- Another name of a field (transformers 5, the original gpt-oss config) stands for the
-- field; both given and different is refused, naming the alias.
local function resolve_aliases(plain, family, site, prefix)
    for alias, field in pairs(family.aliases or {}) do
        local v = plain[alias]
        if v ~= nil then
            if plain[field] ~= nil and plain[field] ~= v then
                schema.raise(site, join(prefix, alias), string.format(
                    "%s disagrees with %s = %s (they name the same size)", schema.describe(v),
                    field, schema.describe(plain[field])))
            end
            plain[field] = v
        end
    end
end

local function unsupported_type(site, field, value, names)
    local quoted = {}
    for i, n in ipairs(names) do
        quoted[i] = n
    end
    schema.raise(site, field, string.format("%s is not supported (supported: %s)",
        schema.describe(value), table.concat(quoted, ", ")))
end

-- Validates the config of one (non-nested) family at `prefix` ("" or "text_config").
local function validate(plain, family, site, prefix)
    resolve_aliases(plain, family, site, prefix)
    local fields = {}
    for k, v in pairs(COMMON) do
        fields[k] = v
    end
    for k, v in pairs(family.fields) do
        fields[k] = v
    end
    local c = schema.validate(plain, { type = "record", open = true, fields = fields }, site,
        prefix)
    for _, u in ipairs(UNSUPPORTED) do
        local v = c[u.field]
        if v ~= nil and (v == u.bad or (u.differs and v ~= u.differs)) then
            schema.raise(site, join(prefix, u.field), string.format("%s is not supported: %s",
                schema.describe(v), u.why))
        end
    end
    if family.check then
        family.check(c, function(field, message)
            schema.raise(site, join(prefix, field), message)
        end)
    end
    return c
end

-- The site of constructor errors: JSON has no lines (scan = false), and constructor fields
-- map to the config's keys at `prefix`.
local function json_site(source, prefix, family)
    local names = {}
    for k, v in pairs(JSON_NAMES) do
        names[k] = join(prefix, v)
    end
    for k, v in pairs(family.json or {}) do
        names[k] = join(prefix, v)
    end
    return { file = source, line = 0, scan = false, names = names }
end

-- Maps a decoded config.json to a normalised model. `name` names the model, `source` is
-- the path of the JSON file (used in errors and as the model's source). `options.part`
-- ("language", the default, or "vision") picks the part of a multimodal checkpoint;
-- `options.site` and `options.field` say where the part was asked for (default: the
-- config itself, as `part`).
function hf.model(cfg, name, source, options)
    options = options or {}
    local site = { file = source, line = 0, scan = false }
    local has_json, json = pcall(require, "refit.json")
    local null = has_json and json.null or nil
    local plain = object(cfg, site, "config", null)
    local family = families[plain.model_type]
    if plain.model_type ~= nil and not family then
        unsupported_type(site, "model_type", plain.model_type, hf.supported_types())
    elseif not family then
        schema.raise(site, "model_type", "missing")
    end
    local part = options.part or "language"
    local asked = options.site or site
    local asked_field = options.field or "part"
    if part == "vision" and not family.vision then
        schema.raise(asked, asked_field, string.format("'vision': refit models the vision "
            .. "tower of llama4 checkpoints only, not of model_type %s",
            schema.describe(plain.model_type)))
    end

    local outer, text, text_family, prefix, names = plain, plain, family, "", nil
    if family.nested then
        local n = family.nested
        outer = schema.validate(plain, { type = "record", open = true,
            fields = { model_type = COMMON.model_type } }, site, "")
        if plain[n.key] == nil then
            schema.raise(site, n.key, string.format("missing (a %s config nests its language "
                .. "model's config there)", plain.model_type))
        end
        text = object(plain[n.key], site, n.key, null)
        text.model_type = text.model_type or n.default
        text_family = families[text.model_type]
        local allowed = false
        for _, t in ipairs(n.types) do
            allowed = allowed or t == text.model_type
        end
        if not allowed then
            unsupported_type(site, n.key .. ".model_type", text.model_type, n.types)
        end
        prefix, names = n.key, NESTED_NAMES
    end
    local c = validate(text, text_family, site, prefix)
    local model_name = family.nested and name .. "-" .. part or name

    if part == "vision" then
        local v = family.vision
        local vc = object(plain.vision_config == nil and {} or plain.vision_config, site,
            "vision_config", null)
        vc = schema.validate(vc, { type = "record", open = true, fields = v.fields }, site,
            "vision_config")
        local vsite = json_site(source, "vision_config", v)
        return vision.llama4(v.build(vc, c, model_name, outer.model_type), vsite)
    end
    local kind, spec = text_family.build(c, model_name, names)
    -- The family is the checkpoint's model_type (llama4, not its llama4_text).
    spec.family = outer.model_type
    local model = transformer.make(kind, spec, json_site(source, prefix, text_family))
    if family.nested then
        model.part = "language"
    end
    return model
end

return hf
