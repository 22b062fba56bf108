-- transformer.lua: family constructors that turn a few hyperparameters into the normalised
-- model of the Lua -> C contract (doc/architecture.md): every weight with its HF name and shape.

-- transformer.dense{...}: dense decoders (Llama, Mistral, Qwen2/3, Gemma 3: GQA with optional
-- biases, per-head q_norm/k_norm and Gemma's feed-forward sandwich norms).
-- transformer.moe{...}:   MoE decoders: Qwen3-MoE and Mixtral (every layer MoE), DeepSeek-V3 /
--                         Kimi / GLM-4.5 (MLA or GQA, first dense layers, shared experts,
--                         router bias), Llama 4 (MoE every n-th layer, a shared expert),
--                         gpt-oss (biases, sinks, fused experts), Qwen3-Next (Gated DeltaNet
--                         layers between full-attention ones), with an optional latent width
--                         for routed experts.
--
-- Tensors are listed in the state_dict order of Hugging Face transformers: embed_tokens;
-- per layer self_attn (or linear_attn), mlp, input_layernorm, post_attention_layernorm;
-- norm; lm_head. The tensors of each block are built by blocks.lua; the names of a
-- family's modules (`block_sparse_moe`, `feed_forward`, `language_model.model.`) come
-- from `names`, so the same constructor names Mixtral's tensors as its checkpoint does.
-- Routed experts of one layer and projection are one stacked [E, out, in] tensor: refit
-- moves them as one 3-D tensor, as NeMo-RL's reshard path and NCCL M2N do.

local schema = require("schema")
local sandbox = require("sandbox")
local blocks = require("blocks")
local hybrid = require("hybrid")

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

local function flag()
    return { type = "boolean", default = false }
end

-- Grouped-query attention (Llama, Qwen, Mistral, GLM, gpt-oss, MiniMax). kv_heads defaults
-- to heads (plain multi-head), head_dim to hidden / heads, as in transformers' configs.
-- blocks.attention_gqa says what bias, qk_norm_span, sinks and output_gate add.
local GQA = {
    heads = positive(true),
    kv_heads = positive(false),
    head_dim = positive(false),
    qk_norm = flag(),
    qk_norm_span = { type = "string", values = { "head", "all" }, default = "head" },
    bias = { type = "string", values = { "none", "qkv", "all" }, default = "none" },
    sinks = flag(),
    output_gate = flag(),
}

-- Multi-head latent attention (DeepSeek-V2/V3, Kimi). Without q_lora_rank the query is one
-- q_proj, as in DeepSeek-V2-Lite. `indexer`: DeepSeek-V3.2's lightning indexer.
local MLA = {
    heads = positive(true),
    q_lora_rank = positive(false),
    kv_lora_rank = positive(true),
    qk_nope_head_dim = positive(true),
    qk_rope_head_dim = positive(true),
    v_head_dim = positive(true),
    indexer = { type = "record", fields = {
        heads = positive(true),
        head_dim = positive(true),
    } },
}

local ATTENTION = { type = "record", required = true, variant = "kind",
                    variants = { gqa = GQA, mla = MLA } }

-- Linear-attention layers (Qwen3-Next's Gated DeltaNet): every layer but each full_every-th
-- (counting from 1, as transformers' full_attention_interval) is linear; the others use
-- `attention`.
local LINEAR_ATTENTION = { type = "record", fields = {
    full_every = positive(true),
    key_heads = positive(true),
    value_heads = positive(true),
    key_head_dim = positive(true),
    value_head_dim = positive(true),
    conv_kernel = positive(true),
} }

-- The module names of a family's checkpoint; the defaults are Llama's, Qwen's and
-- DeepSeek's. `prefix` and `lm_head` change for a language model inside a multimodal
-- checkpoint (`language_model.model.`, `language_model.lm_head.weight`).
local NAMES = { type = "record", default = {}, fields = {
    prefix = { type = "string", default = "model." },
    lm_head = { type = "string", default = "lm_head.weight" },
    mlp = { type = "string", default = "mlp" },
    router = { type = "string", default = "gate" },
    score_bias = { type = "string", default = "gate.e_score_correction_bias" },
    experts = { type = "string", default = "experts" },
    expert_gate = { type = "string", default = "gate_proj" },
    expert_up = { type = "string", default = "up_proj" },
    expert_down = { type = "string", default = "down_proj" },
    shared = { type = "string", default = "shared_experts" },
} }

-- Fields shared by both constructors.
local function common_fields()
    return {
        name = { type = "string", required = true },
        family = { type = "string", required = true },
        hidden = positive(true),
        layers = positive(true),
        vocab = positive(true),
        tie_embeddings = flag(),
        -- Gemma 2/3's sandwich norms: pre_feedforward_layernorm and post_feedforward_layernorm
        -- beside the two every decoder has (Gemma3DecoderLayer).
        ffn_norms = flag(),
        attention = ATTENTION,
        linear_attention = LINEAR_ATTENTION,
        names = NAMES,
    }
end

local DENSE = { type = "record", fields = common_fields() }
DENSE.fields.intermediate = positive(true)

local MOE = { type = "record", fields = common_fields() }
-- Dense layers among MoE ones: the first `layers` (DeepSeek's first_k_dense_replace), those
-- listed in `indices` (0-based: Qwen's mlp_only_layers) and those moe.every skips, all of
-- width `intermediate`.
MOE.fields.dense = { type = "record", fields = {
    layers = count(false, 0),
    indices = { type = "list", items = count(true) },
    intermediate = positive(true),
} }
MOE.fields.moe = { type = "record", required = true, fields = {
    experts = positive(true),
    experts_per_token = positive(true),
    intermediate = positive(true),
    -- MoE on the layers whose 1-based number is a multiple of `every` (Llama 4's
    -- interleave_moe_layer_step, Qwen's decoder_sparse_step).
    every = { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, default = 1 },
    -- Several shared experts are stored as one wider shared expert, as DeepSeek does; each
    -- is `shared_intermediate` wide (default: intermediate, Qwen's own size otherwise).
    shared_experts = count(false, 0),
    shared_intermediate = positive(false),
    -- Qwen2-MoE / Qwen3-Next: a sigmoid gate [1, hidden] scales the shared expert.
    shared_gate = flag(),
    -- DeepSeek-V3's noaux_tc routing adds mlp.gate.e_score_correction_bias (kept FP32).
    router_bias = flag(),
    -- gpt-oss: the router is a linear layer with a bias, and each expert projection has one.
    linear_bias = flag(),
    expert_bias = flag(),
    -- gpt-oss, Llama 4: experts stacked in the checkpoint, gate and up fused (gate_up_proj).
    fused = flag(),
    -- What the checkpoint stores the routed experts' weights as (see blocks.lua).
    stored = { type = "string", values = { "mxfp4" } },
    -- Width in which routed experts compute, when it differs from hidden: a latent
    -- down/up projection per layer surrounds them (used by the Kimi K3 extrapolation).
    latent = positive(false),
} }

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
    elseif a.indexer and not a.q_lora_rank then
        schema.raise(site, "attention.indexer", "the indexer's query comes from the q latent: "
            .. "it needs q_lora_rank")
    end
    if spec.linear_attention and spec.linear_attention.full_every > spec.layers then
        schema.raise(site, "linear_attention.full_every", string.format(
            "%d leaves no full-attention layer among %d layers",
            spec.linear_attention.full_every, spec.layers))
    end
end

-- Whether decoder layer `layer` (0-based) is an MoE layer.
local function moe_layer(spec, layer, indices)
    local d = spec.dense
    return not (d and (layer < d.layers or indices[layer])) and (layer + 1) % spec.moe.every == 0
end

local function dense_indices(spec)
    local set = {}
    for _, i in ipairs(spec.dense and spec.dense.indices or {}) do
        set[i] = true
    end
    return set
end

local function check_moe(spec, site)
    local m = spec.moe
    if m.experts_per_token > m.experts then
        schema.raise(site, "moe.experts_per_token", string.format(
            "%d is more than the %d experts", m.experts_per_token, m.experts))
    end
    local indices = dense_indices(spec)
    for _, i in ipairs(spec.dense and spec.dense.indices or {}) do
        if i >= spec.layers then
            schema.raise(site, "dense.indices", string.format("layer %d outside 0..%d", i,
                spec.layers - 1))
        end
    end
    local moe_layers, dense_layers = 0, 0
    for layer = 0, spec.layers - 1 do
        if moe_layer(spec, layer, indices) then
            moe_layers = moe_layers + 1
        else
            dense_layers = dense_layers + 1
        end
    end
    if spec.dense and spec.dense.layers >= spec.layers then
        schema.raise(site, "dense.layers", string.format(
            "%d dense layers leave no MoE layer among %d layers", spec.dense.layers, spec.layers))
    elseif moe_layers == 0 then
        schema.raise(site, m.every > 1 and "moe.every" or "dense.indices", string.format(
            "leaves no MoE layer among %d layers", spec.layers))
    elseif dense_layers > 0 and not spec.dense then
        schema.raise(site, "moe.every", string.format(
            "%d leaves %d dense layers, which need dense.intermediate", m.every, dense_layers))
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
    local h, names, la = spec.hidden, spec.names, spec.linear_attention
    local indices = dense_indices(spec)
    local dense_width = kind == "dense" and spec.intermediate or spec.dense
        and spec.dense.intermediate
    if kind == "moe" then
        model.experts, model.experts_per_token = spec.moe.experts, spec.moe.experts_per_token
    end

    blocks.add(model, names.prefix .. "embed_tokens.weight", { spec.vocab, h }, "embedding", -1,
        "vocab", false)
    for layer = 0, spec.layers - 1 do
        local prefix = string.format("%slayers.%d.", names.prefix, layer)
        if la and (layer + 1) % la.full_every ~= 0 then
            blocks.linear_attention(model, la, h, layer, prefix)
        elseif a.kind == "mla" then
            blocks.attention_mla(model, a, h, layer, prefix)
        else
            blocks.attention_gqa(model, a, h, layer, prefix)
        end
        local mlp = prefix .. names.mlp .. "."
        if kind == "moe" and moe_layer(spec, layer, indices) then
            blocks.moe(model, spec.moe, h, layer, mlp, names)
        else
            blocks.ffn(model, mlp, dense_width, h, layer, "dense_ffn")
        end
        blocks.norm(model, prefix .. "input_layernorm.weight", h, layer)
        blocks.norm(model, prefix .. "post_attention_layernorm.weight", h, layer)
        if spec.ffn_norms then
            blocks.norm(model, prefix .. "pre_feedforward_layernorm.weight", h, layer)
            blocks.norm(model, prefix .. "post_feedforward_layernorm.weight", h, layer)
        end
    end
    blocks.norm(model, names.prefix .. "norm.weight", h, spec.layers)
    -- Tied embeddings share embed_tokens: there is no separate lm_head weight to move.
    if not spec.tie_embeddings then
        blocks.add(model, names.lm_head, { spec.vocab, h }, "lm_head", spec.layers, "vocab",
            false)
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
    -- How the checkpoint stores the weight when not as `dtype` (blocks.lua): refit moves
    -- `dtype`; transformer.checkpoint_bytes counts this.
    stored = { type = "string", values = { "mxfp4" } },
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
    -- Which part of a multimodal checkpoint this is (hf.lua); absent for a plain LLM.
    part = { type = "string", values = { "language", "vision" } },
} }

local EXPERT_CLASS = { expert_column = true, expert_row = true }

-- MXFP4 (OCP Microscaling): 4-bit E2M1 values, one 8-bit E8M0 scale per block of 32
-- consecutive elements of the last dim: 17 bytes per 32 elements.
local MXFP4_BLOCK = 32
local STORED_BYTES = { bf16 = { 2, 1 }, fp32 = { 4, 1 }, mxfp4 = { 17, MXFP4_BLOCK } }

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
        if t.stored == "mxfp4" and t.shape[#t.shape] % MXFP4_BLOCK ~= 0 then
            fail(string.format("MXFP4 scales blocks of %d along the last dim; %d is not a "
                .. "multiple", MXFP4_BLOCK, t.shape[#t.shape]))
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

-- Bytes of a checked model as its checkpoint stores it: each tensor in `stored` where set,
-- else in `dtype`. refit's own byte counts (C's rf_model_bytes, the plan's payload) are of
-- what moves, `dtype`; this is what a Hugging Face download holds, for the record.
function transformer.checkpoint_bytes(model)
    local total = 0
    for _, t in ipairs(model.tensors) do
        local numel = 1
        for _, d in ipairs(t.shape) do
            numel = numel * d
        end
        local b = STORED_BYTES[t.stored or t.dtype]
        total = total + numel * b[1] // b[2]
    end
    return total
end

local SCHEMAS = { dense = DENSE, moe = MOE, hybrid = hybrid.SCHEMA }

-- Validates and builds; `site` says where `spec` was written (see schema.lua). Used by the
-- constructors below and by hf.lua, whose specs come from a config.json. `kind` "hybrid" is
-- a Mamba-Transformer hybrid (hybrid.lua).
function transformer.make(kind, spec, site)
    if type(spec) ~= "table" then
        schema.raise(site, kind, "expected a table of fields, got " .. schema.describe(spec))
    end
    spec = schema.validate(spec, SCHEMAS[kind], site, "")
    if kind == "hybrid" then
        return transformer.check(hybrid.build(spec, site), site, nil)
    end
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
