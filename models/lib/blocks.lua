-- blocks.lua: the weight tensors of one decoder layer's blocks (attention in its variants,
-- SwiGLU FFN, MoE), appended to a model being built by transformer.lua or vision.lua.

-- Every tensor gets its Hugging Face name, global shape, dtype (bf16 unless told), role,
-- layer and placement class (doc/architecture.md, "Class semantics"). Placement follows
-- Megatron and vLLM: projections that produce heads or FFN columns are column-parallel, the
-- ones that consume them row-parallel; a bias follows its projection's output dim (split
-- with a column projection, whole beside a row one, which adds it after the reduce); norms,
-- routers and small low-rank projections are replicated. `quant` marks the 2-D weights an
-- FP8 inference side quantises (never biases, norms, embeddings, the router or vision).

local schema = require("schema")

local blocks = {}

-- Appends one tensor. A model of more than schema.MAX_TENSORS tensors is refused while it
-- is built, before a huge `layers` can exhaust memory or time.
function blocks.add(model, name, shape, role, layer, class, quant, extra)
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

local add = blocks.add

function blocks.norm(model, name, size, layer)
    add(model, name, { size }, "norm", layer, "replicated", false)
end

local norm = blocks.norm

-- A linear layer's weight and, when `bias`, its bias ([out]: split with a column-parallel
-- weight, replicated beside a row-parallel one).
function blocks.linear(model, name, out, inp, role, layer, class, bias, quant)
    add(model, name .. ".weight", { out, inp }, role, layer, class, quant ~= false)
    if bias then
        add(model, name .. ".bias", { out }, role, layer, class == "row" and "replicated"
            or class, false)
    end
end

local linear = blocks.linear

-- Grouped-query attention (Llama, Qwen, Mistral, GLM, gpt-oss, MiniMax). `bias` "qkv" gives
-- q/k/v biases (Qwen2, GLM-4.5), "all" an o_proj bias too (gpt-oss, Llama's attention_bias).
-- `output_gate` doubles q_proj: Qwen3-Next's gated attention computes a sigmoid gate per
-- head beside each query. Q/K norms span one head (head_dim, shared by the heads: Qwen3,
-- GLM-4.5) or, with qk_norm_span "all", the whole projection (MiniMax-M2: [heads*head_dim],
-- split with the heads). gpt-oss's attention sinks are one learnt logit per head.
function blocks.attention_gqa(model, a, hidden, layer, prefix)
    local q, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    -- `module`: the attention module's name where it is not self_attn (Nemotron-H's mixer).
    local p = prefix .. (a.module or "self_attn") .. "."
    local qkv_bias = a.bias ~= "none"
    linear(model, p .. "q_proj", a.output_gate and 2 * q or q, hidden, "attention", layer,
        "column", qkv_bias)
    linear(model, p .. "k_proj", kv, hidden, "attention", layer, "column", qkv_bias)
    linear(model, p .. "v_proj", kv, hidden, "attention", layer, "column", qkv_bias)
    linear(model, p .. "o_proj", hidden, q, "attention", layer, "row", a.bias == "all")
    if a.qk_norm and a.qk_norm_span == "all" then
        add(model, p .. "q_norm.weight", { q }, "norm", layer, "column", false)
        add(model, p .. "k_norm.weight", { kv }, "norm", layer, "column", false)
    elseif a.qk_norm then
        norm(model, p .. "q_norm.weight", a.head_dim, layer)
        norm(model, p .. "k_norm.weight", a.head_dim, layer)
    end
    if a.sinks then
        add(model, p .. "sinks", { a.heads }, "attention", layer, "column", false)
    end
end

-- MLA: the low-rank down projections (q_a, kv_a) are small and replicated under TP; the
-- up projections (q_b, kv_b) are column-parallel over heads. DeepSeek-V3.2's lightning
-- indexer (DSA) adds its own small query up-projection from the q latent, one key head,
-- a LayerNorm on it and per-head weights; vLLM replicates all of it.
function blocks.attention_mla(model, a, hidden, layer, prefix)
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
    local x = a.indexer
    if x then
        local i = p .. "indexer."
        -- wq_b and wk ship in FP8 with the rest; weights_proj stays BF16 in the checkpoint.
        add(model, i .. "wq_b.weight", { x.heads * x.head_dim, a.q_lora_rank }, "attention",
            layer, "replicated", true)
        add(model, i .. "wk.weight", { x.head_dim, hidden }, "attention", layer, "replicated",
            true)
        norm(model, i .. "k_norm.weight", x.head_dim, layer)
        norm(model, i .. "k_norm.bias", x.head_dim, layer)
        add(model, i .. "weights_proj.weight", { x.heads, hidden }, "attention", layer,
            "replicated", false)
    end
end

-- Gated DeltaNet (Qwen3-Next's linear attention), in transformers' module order. q, k, v
-- and the output gate z come from one projection, the decay inputs b and a from another;
-- a depthwise causal conv1d ([channels, 1, kernel]) runs over q, k, v. Everything per head
-- is split over TP with the value heads; the gated norm spans one value head. A_log stays
-- FP32 in the checkpoint (the kernels need it).
function blocks.linear_attention(model, la, hidden, layer, prefix)
    local key, value = la.key_heads * la.key_head_dim, la.value_heads * la.value_head_dim
    local p = prefix .. "linear_attn."
    add(model, p .. "conv1d.weight", { 2 * key + value, 1, la.conv_kernel }, "attention", layer,
        "column", false)
    add(model, p .. "in_proj_qkvz.weight", { 2 * key + 2 * value, hidden }, "attention", layer,
        "column", true)
    add(model, p .. "in_proj_ba.weight", { 2 * la.value_heads, hidden }, "attention", layer,
        "column", true)
    add(model, p .. "dt_bias", { la.value_heads }, "attention", layer, "column", false)
    add(model, p .. "A_log", { la.value_heads }, "attention", layer, "column", false,
        { dtype = "fp32" })
    norm(model, p .. "norm.weight", la.value_head_dim, layer)
    add(model, p .. "out_proj.weight", { hidden, value }, "attention", layer, "row", true)
end

-- A SwiGLU FFN: gate/up column-parallel, down row-parallel. `gated` false: a ReLU^2 MLP
-- (Nemotron-H's), up and down only.
function blocks.ffn(model, prefix, width, hidden, layer, role, gated)
    if gated ~= false then
        add(model, prefix .. "gate_proj.weight", { width, hidden }, role, layer, "column", true)
    end
    add(model, prefix .. "up_proj.weight", { width, hidden }, role, layer, "column", true)
    add(model, prefix .. "down_proj.weight", { hidden, width }, role, layer, "row", true)
end

-- Routed experts of one layer and projection are one stacked [E, out, in] tensor. Where
-- the checkpoint stores each expert apart (DeepSeek, Qwen, Mixtral) the name carries a
-- brace range (`experts.{0..255}.gate_proj.weight`); where it stores them stacked already
-- (gpt-oss, Llama 4: `experts.gate_up_proj`, gate and up fused) the name is the
-- checkpoint's. Those checkpoints keep [E, in, out]; refit lists every stacked tensor as
-- [E, out, in], the orientation its classes split (same elements, same bytes).
--
-- Expert biases (gpt-oss) are [E, out] in the checkpoint; the contract stacks experts in
-- 3 dims, so they are [E, out, 1] expert_column: EP splits them with their experts. The
-- down bias is whole on every TP rank in the engines, split here: the bytes are exact, the
-- per-rank split of these 0.01% of the weights is not.
--
-- `m.stored` = "mxfp4": the checkpoint ships the routed experts' weights as MXFP4 (4-bit
-- values in `*_blocks`, one E8M0 scale per 32 in `*_scales`); the trainer and refit's
-- transfer hold them in BF16, so dtype stays bf16 and `stored` says what the checkpoint
-- holds (transformer.checkpoint_bytes counts 17/32 bytes per element).
local function experts(model, m, hidden, layer, p, names)
    local e, width = m.experts, m.latent or hidden
    local stacked = { experts = e, stored = m.stored }
    local bias = { experts = e }
    if m.fused then
        local base = string.format("%s%s.", p, names.experts)
        add(model, base .. "gate_up_proj", { e, 2 * m.intermediate, width }, "expert", layer,
            "expert_column", true, stacked)
        if m.expert_bias then
            add(model, base .. "gate_up_proj_bias", { e, 2 * m.intermediate, 1 }, "expert",
                layer, "expert_column", false, bias)
        end
        add(model, base .. "down_proj", { e, width, m.intermediate }, "expert", layer,
            "expert_row", true, stacked)
        if m.expert_bias then
            add(model, base .. "down_proj_bias", { e, width, 1 }, "expert", layer,
                "expert_column", false, bias)
        end
        return
    end
    local base = string.format("%s%s.{0..%d}.", p, names.experts, e - 1)
    if not m.ungated then
        add(model, base .. names.expert_gate .. ".weight", { e, m.intermediate, width },
            "expert", layer, "expert_column", true, stacked)
    end
    add(model, base .. names.expert_up .. ".weight", { e, m.intermediate, width }, "expert",
        layer, "expert_column", true, stacked)
    add(model, base .. names.expert_down .. ".weight", { e, width, m.intermediate }, "expert",
        layer, "expert_row", true, stacked)
end

-- An MoE block at `p` (the layer's "mlp." or its family's name for it): the router first
-- (its weight, its own bias, DeepSeek's FP32 e_score_correction_bias), then the routed
-- experts, then the shared experts (several are one wider tensor, as DeepSeek stores
-- them) and Qwen's sigmoid gate on them. `m.ungated`: ReLU^2 experts, up and down only
-- (Nemotron 3).
function blocks.moe(model, m, hidden, layer, p, names)
    add(model, p .. names.router .. ".weight", { m.experts, hidden }, "router", layer,
        "replicated", false)
    if m.linear_bias then
        add(model, p .. names.router .. ".bias", { m.experts }, "router", layer, "replicated",
            false)
    end
    if m.router_bias then
        add(model, p .. names.score_bias, { m.experts }, "router", layer, "replicated", false,
            { dtype = "fp32" })
    end
    if m.latent then
        -- Tensor names invented by refit: no public checkpoint has this layout yet.
        add(model, p .. "latent_in_proj.weight", { m.latent, hidden }, "dense_ffn", layer,
            "column", true)
        add(model, p .. "latent_out_proj.weight", { hidden, m.latent }, "dense_ffn", layer,
            "row", true)
    end
    experts(model, m, hidden, layer, p, names)
    if m.shared_experts > 0 then
        blocks.ffn(model, p .. names.shared .. ".",
            m.shared_experts * (m.shared_intermediate or m.intermediate), hidden, layer,
            "shared_expert", not m.ungated)
        if m.shared_gate then
            add(model, p .. names.shared .. "_gate.weight", { 1, hidden }, "shared_expert",
                layer, "replicated", false)
        end
    end
end

return blocks
