-- transformer.lua: family constructors that turn a few hyperparameters into the normalised
-- model of the Lua -> C contract (doc/architecture.md): every weight with its HF name and shape.

-- transformer.dense{...}: Llama 3 and Qwen3 dense (GQA; Qwen3 adds per-head q_norm/k_norm).
-- transformer.moe{...}:   Qwen3-MoE (GQA, every layer MoE, no shared expert) and
--                         DeepSeek-V3 / Kimi (MLA, first dense layers, shared experts, router
--                         bias), with an optional latent width for routed experts.
--
-- Tensors are listed in the state_dict order of Hugging Face transformers: embed_tokens;
-- per layer self_attn, mlp, input_layernorm, post_attention_layernorm; norm; lm_head.
-- Inside an MoE block the router comes first, then routed experts, then shared experts.
-- Routed experts of one layer and projection are one stacked [E, out, in] tensor named
-- with a brace range (`mlp.experts.{0..255}.gate_proj.weight`): refit moves them as one
-- 3-D tensor, as NeMo-RL's reshard path and NCCL M2N do. Placement classes follow
-- Megatron/vLLM: q/k/v/gate/up/q_b/kv_b column-parallel, o/down row-parallel, MLA q_a/kv_a,
-- norms and the router replicated, embeddings and lm_head vocab-parallel.

local schema = require("schema")
local sandbox = require("sandbox")

local transformer = {}

-- Every integer size of a model is at most schema.MAX_MODEL_SIZE (2^31 - 1), so products of
-- two sizes stay exact and the tensor checks below see every overflow before it happens.
local function positive(required)
    return { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, required = required }
end

local function count(required, default)
    return { type = "integer", min = 0, max = schema.MAX_MODEL_SIZE, required = required,
             default = default }
end

-- Grouped-query attention (Llama, Qwen3). kv_heads defaults to heads (plain multi-head),
-- head_dim to hidden / heads, as in transformers' configs.
local GQA = {
    heads = positive(true),
    kv_heads = positive(false),
    head_dim = positive(false),
    qk_norm = { type = "boolean", default = false },
}

-- Multi-head latent attention (DeepSeek-V2/V3, Kimi). Without q_lora_rank the query is one
-- q_proj, as in DeepSeek-V2-Lite.
local MLA = {
    heads = positive(true),
    q_lora_rank = positive(false),
    kv_lora_rank = positive(true),
    qk_nope_head_dim = positive(true),
    qk_rope_head_dim = positive(true),
    v_head_dim = positive(true),
}

local ATTENTION = { type = "record", required = true, variant = "kind",
                    variants = { gqa = GQA, mla = MLA } }

-- Fields shared by both constructors.
local function common_fields()
    return {
        name = { type = "string", required = true },
        family = { type = "string", required = true },
        hidden = positive(true),
        layers = positive(true),
        vocab = positive(true),
        tie_embeddings = { type = "boolean", default = false },
        attention = ATTENTION,
    }
end

local DENSE = { type = "record", fields = common_fields() }
DENSE.fields.intermediate = positive(true)

local MOE = { type = "record", fields = common_fields() }
-- The first `layers` decoder layers are dense (DeepSeek's first_k_dense_replace).
MOE.fields.dense = { type = "record", fields = {
    layers = count(true),
    intermediate = positive(true),
} }
MOE.fields.moe = { type = "record", required = true, fields = {
    experts = positive(true),
    experts_per_token = positive(true),
    intermediate = positive(true),
    -- Several shared experts are stored as one wider shared expert, as DeepSeek does.
    shared_experts = count(false, 0),
    -- DeepSeek-V3's noaux_tc routing adds mlp.gate.e_score_correction_bias (kept FP32).
    router_bias = { type = "boolean", default = false },
    -- Width in which routed experts compute, when it differs from hidden: a latent
    -- down/up projection per layer surrounds them (used by the Kimi K3 extrapolation).
    latent = positive(false),
} }

-- Appends one tensor; dtype bf16 and unstacked unless told otherwise. A model of more than
-- schema.MAX_TENSORS tensors is refused while it is built, before a huge `layers` can
-- exhaust memory or time.
local function add(model, name, shape, role, layer, class, quant, extra)
    if #model.tensors >= schema.MAX_TENSORS then
        schema.raise(model.site, "layers", string.format(
            "%d layers make more than %d tensors, the most refit plans", model.layers,
            schema.MAX_TENSORS))
    end
    local t = { name = name, shape = shape, dtype = "bf16", role = role, layer = layer,
                class = class, experts = 0, quant = quant }
    for k, v in pairs(extra or {}) do
        t[k] = v
    end
    model.tensors[#model.tensors + 1] = t
end

local function norm(model, name, size, layer)
    add(model, name, { size }, "norm", layer, "replicated", false)
end

local function attention_gqa(model, a, hidden, layer, prefix)
    local q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    local p = prefix .. "self_attn."
    add(model, p .. "q_proj.weight", { q, hidden }, "attention", layer, "column", true)
    add(model, p .. "k_proj.weight", { kv, hidden }, "attention", layer, "column", true)
    add(model, p .. "v_proj.weight", { kv, hidden }, "attention", layer, "column", true)
    add(model, p .. "o_proj.weight", { hidden, q }, "attention", layer, "row", true)
    if a.qk_norm then
        norm(model, p .. "q_norm.weight", a.head_dim, layer)
        norm(model, p .. "k_norm.weight", a.head_dim, layer)
    end
end

-- MLA: the low-rank down projections (q_a, kv_a) are small and replicated under TP; the
-- up projections (q_b, kv_b) are column-parallel over heads.
local function attention_mla(model, a, hidden, layer, prefix)
    local qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim
    local p = prefix .. "self_attn."
    if a.q_lora_rank then
        add(model, p .. "q_a_proj.weight", { a.q_lora_rank, hidden }, "attention", layer,
            "replicated", true)
        norm(model, p .. "q_a_layernorm.weight", a.q_lora_rank, layer)
        add(model, p .. "q_b_proj.weight", { a.heads * qk_head, a.q_lora_rank }, "attention",
            layer, "column", true)
    else
        add(model, p .. "q_proj.weight", { a.heads * qk_head, hidden }, "attention", layer,
            "column", true)
    end
    add(model, p .. "kv_a_proj_with_mqa.weight", { a.kv_lora_rank + a.qk_rope_head_dim, hidden },
        "attention", layer, "replicated", true)
    norm(model, p .. "kv_a_layernorm.weight", a.kv_lora_rank, layer)
    add(model, p .. "kv_b_proj.weight",
        { a.heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank }, "attention", layer,
        "column", true)
    add(model, p .. "o_proj.weight", { hidden, a.heads * a.v_head_dim }, "attention", layer,
        "row", true)
end

-- A SwiGLU FFN: gate/up column-parallel, down row-parallel.
local function ffn(model, prefix, width, hidden, layer, role)
    add(model, prefix .. "gate_proj.weight", { width, hidden }, role, layer, "column", true)
    add(model, prefix .. "up_proj.weight", { width, hidden }, role, layer, "column", true)
    add(model, prefix .. "down_proj.weight", { hidden, width }, role, layer, "row", true)
end

local function moe_block(model, m, hidden, layer, prefix)
    local p = prefix .. "mlp."
    add(model, p .. "gate.weight", { m.experts, hidden }, "router", layer, "replicated", false)
    if m.router_bias then
        add(model, p .. "gate.e_score_correction_bias", { m.experts }, "router", layer,
            "replicated", false, { dtype = "fp32" })
    end
    local width = m.latent or hidden
    if m.latent then
        -- Tensor names invented by refit: no public checkpoint has this layout yet.
        add(model, p .. "latent_in_proj.weight", { m.latent, hidden }, "dense_ffn", layer,
            "column", true)
        add(model, p .. "latent_out_proj.weight", { hidden, m.latent }, "dense_ffn", layer,
            "row", true)
    end
    local experts = string.format("%sexperts.{0..%d}.", p, m.experts - 1)
    local stacked = { experts = m.experts }
    add(model, experts .. "gate_proj.weight", { m.experts, m.intermediate, width }, "expert",
        layer, "expert_column", true, stacked)
    add(model, experts .. "up_proj.weight", { m.experts, m.intermediate, width }, "expert",
        layer, "expert_column", true, stacked)
    add(model, experts .. "down_proj.weight", { m.experts, width, m.intermediate }, "expert",
        layer, "expert_row", true, stacked)
    if m.shared_experts > 0 then
        ffn(model, p .. "shared_experts.", m.shared_experts * m.intermediate, hidden, layer,
            "shared_expert")
    end
end

-- Checks what the schema cannot (relations between fields) and fills derived defaults.
local function check_attention(spec, site)
    local a = spec.attention
    if a.kind == "gqa" then
        if not a.head_dim then
            if spec.hidden % a.heads ~= 0 then
                schema.raise(site, "attention.head_dim", string.format(
                    "missing, and hidden %d is not a multiple of heads %d", spec.hidden, a.heads))
            end
            a.head_dim = spec.hidden // a.heads
        end
        a.kv_heads = a.kv_heads or a.heads
        if a.heads % a.kv_heads ~= 0 then
            schema.raise(site, "attention.kv_heads", string.format(
                "heads %d is not a multiple of kv_heads %d", a.heads, a.kv_heads))
        end
    end
end

local function check_moe(spec, site)
    local m = spec.moe
    if m.experts_per_token > m.experts then
        schema.raise(site, "moe.experts_per_token", string.format(
            "%d is more than the %d experts", m.experts_per_token, m.experts))
    end
    if spec.dense and spec.dense.layers >= spec.layers then
        schema.raise(site, "dense.layers", string.format(
            "%d dense layers leave no MoE layer among %d layers", spec.dense.layers, spec.layers))
    end
end

-- Builds the normalised model from a validated spec. `kind` is "dense" or "moe".
local function build(kind, spec, site)
    local a = spec.attention
    -- MLA has no KV heads of its own (one latent shared by all heads): TP splits its heads,
    -- so the KV rule is the heads rule (kv_heads = heads).
    local model = { kind = "model", name = spec.name, family = spec.family, source = site.file,
                    layers = spec.layers, experts = 0, experts_per_token = 0, tensors = {},
                    attention = { kind = a.kind, heads = a.heads,
                                  kv_heads = a.kind == "gqa" and a.kv_heads or a.heads },
                    site = site }
    -- Every decoder layer has at least 9 tensors (4 attention projections, 3 FFN or router +
    -- 3 stacked experts, 2 norms), plus embed_tokens and the final norm: refuse a model that
    -- must exceed the tensor bound before building any of it.
    if 9 * spec.layers + 2 > schema.MAX_TENSORS then
        schema.raise(site, "layers", string.format(
            "%d layers make more than %d tensors (at least 9 per layer), the most refit plans",
            spec.layers, schema.MAX_TENSORS))
    end
    local h = spec.hidden
    local dense_layers, dense_width = spec.layers, spec.intermediate
    if kind == "moe" then
        model.experts, model.experts_per_token = spec.moe.experts, spec.moe.experts_per_token
        dense_layers = spec.dense and spec.dense.layers or 0
        dense_width = spec.dense and spec.dense.intermediate
    end

    add(model, "model.embed_tokens.weight", { spec.vocab, h }, "embedding", -1, "vocab", false)
    for layer = 0, spec.layers - 1 do
        local prefix = string.format("model.layers.%d.", layer)
        if spec.attention.kind == "mla" then
            attention_mla(model, spec.attention, h, layer, prefix)
        else
            attention_gqa(model, spec.attention, h, layer, prefix)
        end
        if layer < dense_layers then
            ffn(model, prefix .. "mlp.", dense_width, h, layer, "dense_ffn")
        else
            moe_block(model, spec.moe, h, layer, prefix)
        end
        norm(model, prefix .. "input_layernorm.weight", h, layer)
        norm(model, prefix .. "post_attention_layernorm.weight", h, layer)
    end
    norm(model, "model.norm.weight", h, spec.layers)
    -- Tied embeddings share embed_tokens: there is no separate lm_head weight to move.
    if not spec.tie_embeddings then
        add(model, "lm_head.weight", { spec.vocab, h }, "lm_head", spec.layers, "vocab", false)
    end
    model.site = nil
    return model
end

-- The normalised model of the Lua -> C contract (doc/architecture.md), whatever built it.
local TENSOR = { type = "record", fields = {
    name = { type = "string", required = true },
    -- A dimension is at most a tensor's whole element count; their product is checked below.
    shape = { type = "list", required = true, min_items = 1, max_items = 4,
              items = { type = "integer", min = 1, max = schema.MAX_NUMEL, required = true } },
    dtype = { type = "string", values = { "bf16", "fp32" }, required = true },
    role = { type = "string", required = true, values = { "embedding", "attention",
             "dense_ffn", "expert", "shared_expert", "router", "norm", "lm_head" } },
    -- -1 embedding, 0..layers-1 decoder, layers final norm / lm_head (checked below).
    layer = { type = "integer", min = -1, max = schema.MAX_MODEL_SIZE, required = true },
    class = { type = "string", required = true, values = { "column", "row", "vocab",
              "replicated", "expert_column", "expert_row" } },
    experts = count(false, 0),
    quant = { type = "boolean", default = false },
} }

local MODEL = { type = "record", fields = {
    kind = { type = "string", values = { "model" }, required = true },
    name = { type = "string", required = true },
    family = { type = "string", required = true },
    source = { type = "string" },
    layers = positive(true),
    experts = count(false, 0),
    experts_per_token = count(false, 0),
    -- What the TP rules of layout.lua need: attention heads and KV heads (MLA: = heads).
    attention = { type = "record", required = true, fields = {
        kind = { type = "string", values = { "gqa", "mla" }, required = true },
        heads = positive(true),
        kv_heads = positive(true),
    } },
    tensors = { type = "list", required = true, min_items = 1, max_items = schema.MAX_TENSORS,
                items = TENSOR },
} }

local EXPERT_CLASS = { expert_column = true, expert_row = true }

local function shape_text(shape)
    local parts = {}
    for i, d in ipairs(shape) do
        parts[i] = tostring(d)
    end
    return "[" .. table.concat(parts, ", ") .. "]"
end

-- Checks a normalised model against the contract and returns its validated copy. Every
-- model passes here, whatever its origin: a constructor (`prefix` nil: errors name the
-- tensor, at the constructor call), a model file or a table built by hand (errors name
-- `prefix`.tensors.<i>). Element counts are checked by division, so that no product wraps.
function transformer.check(model, site, prefix)
    local function at(name)
        return (prefix == nil or prefix == "") and name or prefix .. "." .. name
    end
    local m = schema.validate(model, MODEL, site, prefix or "")
    m.source = m.source or site.file
    local a = m.attention
    if a.kind == "mla" and a.kv_heads ~= a.heads then
        schema.raise(site, at("attention.kv_heads"), string.format(
            "expected heads = %d (MLA shares one latent KV over all heads), got %d", a.heads,
            a.kv_heads))
    elseif a.heads % a.kv_heads ~= 0 then
        schema.raise(site, at("attention.kv_heads"), string.format(
            "heads %d is not a multiple of kv_heads %d", a.heads, a.kv_heads))
    end
    if m.experts_per_token > m.experts or (m.experts > 0) ~= (m.experts_per_token > 0) then
        schema.raise(site, at("experts_per_token"), string.format(
            "%d for %d experts; expected 1 to experts (0 for a dense model)",
            m.experts_per_token, m.experts))
    end
    local total, seen = 0, {}
    for i, t in ipairs(m.tensors) do
        -- Built by hand: the field is the tensor's place in the list, the message names it.
        local field = prefix == nil and t.name or at("tensors." .. i)
        local function fail(message)
            schema.raise(site, field, message
                .. (prefix == nil and "" or string.format(" (tensor '%s')", t.name)))
        end
        if seen[t.name] then
            fail(string.format("the name of tensor %d again", seen[t.name]))
        end
        seen[t.name] = i
        if t.layer > m.layers then
            fail(string.format("layer %d outside -1..%d", t.layer, m.layers))
        end
        if EXPERT_CLASS[t.class] then
            if #t.shape ~= 3 or t.experts ~= t.shape[1] or t.experts ~= m.experts then
                fail(string.format("expert tensors are [E, out, in] with experts = E = the "
                    .. "model's %d experts", m.experts))
            end
        elseif t.experts ~= 0 then
            fail(string.format("experts = %d on a %s tensor; only expert tensors are stacked",
                t.experts, t.class))
        end
        if t.class == "row" and #t.shape < 2 then
            fail("a row-parallel tensor needs 2 dims")
        end
        local numel = 1
        for _, d in ipairs(t.shape) do
            if numel > schema.MAX_NUMEL // d then
                local approx = 1.0
                for _, e in ipairs(t.shape) do
                    approx = approx * e
                end
                fail(string.format("shape %s has %.4g elements, more than 2^48 = %d",
                    shape_text(t.shape), approx, schema.MAX_NUMEL))
            end
            numel = numel * d
        end
        total = total + numel
        if total > schema.MAX_PARAMS then
            fail(string.format("the model's parameters reach %.4g here, more than 2^53 = %d",
                total, schema.MAX_PARAMS))
        end
    end
    return m
end

local SCHEMAS = { dense = DENSE, moe = MOE }

-- Validates and builds; `site` says where `spec` was written (see schema.lua). Used by the
-- constructors below and by hf.lua, whose specs come from a config.json.
function transformer.make(kind, spec, site)
    if type(spec) ~= "table" then
        schema.raise(site, kind, "expected a table of fields, got " .. schema.describe(spec))
    end
    spec = schema.validate(spec, SCHEMAS[kind], site, "")
    check_attention(spec, site)
    if kind == "moe" then
        check_moe(spec, site)
    end
    return transformer.check(build(kind, spec, site), site, nil)
end

-- The constructors model files call. sandbox.caller() must be called right here, so that
-- the stack level it inspects is the model file's call.
function transformer.dense(spec)
    return transformer.make("dense", spec, sandbox.caller())
end

function transformer.moe(spec)
    return transformer.make("moe", spec, sandbox.caller())
end

return transformer
