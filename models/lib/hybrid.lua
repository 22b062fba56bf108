-- hybrid.lua: hybrid Mamba-Transformer decoders (Nemotron-H, Nemotron Nano v2, Nemotron 3),
-- whose layers are each one block of one kind, as a pattern says: "M" a Mamba-2 mixer, "*"
-- attention, "-" an MLP, "E" a mixture of experts. transformer.make("hybrid", spec) builds
-- them; hf_families.lua maps config.json's hybrid_override_pattern onto `pattern`.
--
-- Tensors are named and ordered as transformers' NemotronHForCausalLM (modeling_nemotron_h.py)
-- stores them: backbone.embeddings; per layer backbone.layers.<i>.norm and its mixer;
-- backbone.norm_f; lm_head. Every block's mixer is `mixer.`, whatever its kind.
--
-- Placement follows Megatron's MambaMixer and vLLM's MambaMixer2: in_proj (z, x, B, C and dt
-- concatenated) and the depthwise conv1d over x, B, C are column-parallel, split by heads and
-- groups; dt_bias, A_log, D and the gated norm follow the heads; out_proj is row-parallel.
-- Both split in_proj part by part, where refit splits the fused rows evenly: the bytes each
-- GPU holds are the same, and so are the pairs that exchange them (both sides split alike),
-- but which rows of the checkpoint's tensor a GPU holds is refit's order, not theirs. The
-- MLP and the experts are ReLU^2 (up, down: no gate).

local schema = require("schema")
local blocks = require("blocks")

local hybrid = {}

local positive, count = schema.model_size, schema.model_count

hybrid.SCHEMA = { type = "record", fields = {
    name = { type = "string", required = true },
    family = { type = "string", required = true },
    hidden = positive(true),
    vocab = positive(true),
    tie_embeddings = { type = "boolean", default = false },
    -- One character per layer: M (Mamba-2), * (attention), - (MLP), E (MoE).
    pattern = { type = "string", required = true },
    attention = { type = "record", required = true, fields = {
        heads = positive(true), kv_heads = positive(true), head_dim = positive(true),
        bias = { type = "boolean", default = false },
    } },
    mamba = { type = "record", required = true, fields = {
        heads = positive(true), head_dim = positive(true), state = positive(true),
        groups = positive(true), conv_kernel = positive(true),
        conv_bias = { type = "boolean", default = true },
        proj_bias = { type = "boolean", default = false },
    } },
    -- The MLP layers' width.
    intermediate = positive(false),
    moe = { type = "record", fields = {
        experts = positive(true), experts_per_token = positive(true), intermediate = positive(true),
        shared_experts = count(false, 0), shared_intermediate = positive(false),
    } },
} }

local KINDS = { M = "mamba", ["*"] = "attention", ["-"] = "mlp", E = "moe" }

local function mamba(model, m, hidden, layer, p)
    local inner, groups = m.heads * m.head_dim, m.groups * m.state
    local conv = inner + 2 * groups
    blocks.linear(model, p .. "in_proj", 2 * inner + 2 * groups + m.heads, hidden, "attention",
        layer, "column", m.proj_bias)
    blocks.add(model, p .. "conv1d.weight", { conv, 1, m.conv_kernel }, "attention", layer,
        "column", false)
    if m.conv_bias then
        blocks.add(model, p .. "conv1d.bias", { conv }, "attention", layer, "column", false)
    end
    for _, name in ipairs({ "dt_bias", "A_log", "D" }) do
        blocks.add(model, p .. name, { m.heads }, "attention", layer, "column", false)
    end
    blocks.add(model, p .. "norm.weight", { inner }, "norm", layer, "column", false)
    blocks.linear(model, p .. "out_proj", hidden, inner, "attention", layer, "row", m.proj_bias)
end

-- Checks the relations the schema cannot see and builds the model of a validated spec.
function hybrid.build(spec, site)
    local pattern = spec.pattern
    local layers = #pattern
    if layers == 0 or layers > schema.MAX_TENSORS // 8 then
        schema.raise(site, "pattern", string.format("%d layers; expected 1 to %d", layers,
            schema.MAX_TENSORS // 8))
    end
    local bad = pattern:find("[^M%*%-E]")
    if bad then
        schema.raise(site, "pattern", string.format("'%s' at layer %d: expected M (Mamba-2), * "
            .. "(attention), - (MLP) or E (MoE)", pattern:sub(bad, bad), bad - 1))
    end
    if pattern:find("-", 1, true) and not spec.intermediate then
        schema.raise(site, "intermediate", "missing: the pattern has MLP layers (-)")
    end
    if pattern:find("E", 1, true) and not spec.moe then
        schema.raise(site, "moe", "missing: the pattern has MoE layers (E)")
    end
    if not pattern:find("*", 1, true) then
        schema.raise(site, "pattern", "has no attention layer (*)")
    end
    local a, m = spec.attention, spec.mamba
    if a.heads % a.kv_heads ~= 0 then
        schema.raise(site, "attention.kv_heads", string.format(
            "heads %d is not a multiple of kv_heads %d", a.heads, a.kv_heads))
    end
    if m.heads % m.groups ~= 0 then
        schema.raise(site, "mamba.groups", string.format(
            "mamba heads %d is not a multiple of groups %d", m.heads, m.groups))
    end
    local moe = spec.moe
    if moe and moe.experts_per_token > moe.experts then
        schema.raise(site, "moe.experts_per_token", string.format(
            "%d is more than the %d experts", moe.experts_per_token, moe.experts))
    end
    local model = { kind = "model", name = spec.name, family = spec.family, source = site.file,
                    layers = layers, experts = moe and moe.experts or 0,
                    experts_per_token = moe and moe.experts_per_token or 0, tensors = {},
                    attention = { kind = "gqa", heads = a.heads, kv_heads = a.kv_heads },
                    site = site }
    local h = spec.hidden
    blocks.add(model, "backbone.embeddings.weight", { spec.vocab, h }, "embedding", -1, "vocab",
        false)
    local attention = { heads = a.heads, kv_heads = a.kv_heads, head_dim = a.head_dim,
                        bias = a.bias and "all" or "none", module = "mixer" }
    local names = { router = "gate", score_bias = "gate.e_score_correction_bias",
                    experts = "experts", expert_up = "up_proj", expert_down = "down_proj",
                    shared = "shared_experts" }
    for layer = 0, layers - 1 do
        local p = string.format("backbone.layers.%d.", layer)
        blocks.norm(model, p .. "norm.weight", h, layer)
        local kind = KINDS[pattern:sub(layer + 1, layer + 1)]
        local mixer = p .. "mixer."
        if kind == "mamba" then
            mamba(model, m, h, layer, mixer)
        elseif kind == "attention" then
            blocks.attention_gqa(model, attention, h, layer, p)
        elseif kind == "mlp" then
            blocks.ffn(model, mixer, spec.intermediate, h, layer, "dense_ffn", false)
        else
            blocks.moe(model, { experts = moe.experts, intermediate = moe.intermediate,
                                -- One shared MLP of moe_shared_expert_intermediate_size.
                                shared_experts = moe.shared_experts > 0 and 1 or 0,
                                shared_intermediate = moe.shared_intermediate,
                                router_bias = true, ungated = true }, h, layer, mixer, names)
        end
    end
    blocks.norm(model, "backbone.norm_f.weight", h, layers)
    if not spec.tie_embeddings then
        blocks.add(model, "lm_head.weight", { spec.vocab, h }, "lm_head", layers, "vocab", false)
    end
    model.site = nil
    return model
end

return hybrid
