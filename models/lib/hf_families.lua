-- hf_families.lua: per Hugging Face model_type, the config.json fields refit reads and the
-- transformer constructor spec they map to (hf.lua validates, nests and dispatches).

-- Field names and defaults are transformers' (configuration_*.py); a field refit needs and
-- transformers has no default for is required. Each family says:
--   fields   the schema of the fields read (besides hf.lua's COMMON ones);
--   aliases  other names of a field (transformers 5 re-saves Qwen3-MoE's num_experts as
--            num_local_experts, DeepSeek's n_routed_experts may come as num_local_experts,
--            gpt-oss's original config says experts_per_token): alias -> field;
--   json     constructor field -> JSON key, where it differs from hf.lua's defaults, so the
--            errors the constructors raise name the key the user wrote;
--   check    (c, fail) relations between fields: fail(field, message) raises;
--   build    (c, name, names) -> "dense"|"moe", spec; `names` carries the checkpoint's
--            tensor prefix for a language model inside a multimodal checkpoint;
--   nested   (multimodal checkpoints) where the language model's config is and which
--            model_types it may have;
--   vision   (c, text, name) -> the vision tower's spec (vision.lua), for part "vision".

local schema = require("schema")

local families = {}

local positive, count = schema.model_size, schema.model_count

local function flag(default)
    return { type = "boolean", default = default or false }
end

local function layer_list()
    return { type = "list", items = count(true) }
end

-- The GQA fields every GQA family reads, plus `extra`.
local function gqa_fields(extra)
    local fields = {
        num_key_value_heads = positive(false),
        head_dim = positive(false),
    }
    for k, v in pairs(extra) do
        fields[k] = v
    end
    return fields
end

-- The GQA attention spec; `opts` adds bias, qk_norm, qk_norm_span, sinks, output_gate.
local function gqa(c, opts)
    local a = { kind = "gqa", heads = c.num_attention_heads, kv_heads = c.num_key_value_heads,
                head_dim = c.head_dim }
    for k, v in pairs(opts or {}) do
        a[k] = v
    end
    return a
end

local function base(c, name, names)
    return { name = name, family = c.model_type, hidden = c.hidden_size,
             layers = c.num_hidden_layers, vocab = c.vocab_size,
             tie_embeddings = c.tie_word_embeddings, names = names }
end

-- Copies `names` (the checkpoint prefix of a nested language model) and adds `extra`.
local function with(names, extra)
    local out = {}
    for k, v in pairs(names or {}) do
        out[k] = v
    end
    for k, v in pairs(extra) do
        out[k] = v
    end
    return out
end

-- Dense layers among MoE layers (Qwen's mlp_only_layers and decoder_sparse_step): a dense
-- record only when some layer is dense, so that a config without intermediate_size is
-- refused only when it needs one.
local function qwen_dense(c)
    if #c.mlp_only_layers == 0 and c.decoder_sparse_step == 1 then
        return nil
    end
    return { indices = c.mlp_only_layers, intermediate = c.intermediate_size }
end

-- Dense decoders. Llama's attention_bias puts a bias on q, k, v and o (LlamaAttention);
-- mlp_bias is refused by hf.lua. Mistral has neither; Qwen2 always biases q, k, v.
local function dense(bias, qk_norm)
    return function(c, name, names)
        local spec = base(c, name, names)
        spec.attention = gqa(c, { bias = bias(c), qk_norm = qk_norm })
        spec.intermediate = c.intermediate_size
        return "dense", spec
    end
end

local function attention_bias(c)
    return c.attention_bias and "all" or "none"
end

families.llama = {
    fields = gqa_fields({ intermediate_size = positive(true), attention_bias = flag(),
                          mlp_bias = flag() }),
    build = dense(attention_bias, false),
}

families.mistral = {
    fields = gqa_fields({ intermediate_size = positive(true) }),
    build = dense(function() return "none" end, false),
}

families.qwen2 = {
    fields = gqa_fields({ intermediate_size = positive(true) }),
    build = dense(function() return "qkv" end, false),
}

families.qwen3 = {
    fields = gqa_fields({ intermediate_size = positive(true), attention_bias = flag() }),
    build = dense(attention_bias, true),
}

-- Gemma 3's language model (Gemma3ForCausalLM, model_type gemma3_text; transformers'
-- modeling_gemma3.py): GQA with per-head Q/K norms and no biases, a GeGLU MLP (gate, up,
-- down, as Llama's), four norms per layer, embeddings tied (the config's default). Sliding-
-- window layers differ in their attention mask only, not in their weights.
families.gemma3_text = {
    fields = gqa_fields({ intermediate_size = positive(true), attention_bias = flag(),
                          tie_word_embeddings = flag(true) }),
    build = function(c, name, names)
        local spec = base(c, name, names)
        spec.attention = gqa(c, { bias = attention_bias(c), qk_norm = true })
        spec.intermediate = c.intermediate_size
        spec.ffn_norms = true
        return "dense", spec
    end,
}

local QWEN_MOE = {
    num_experts = positive(true),
    num_experts_per_tok = positive(true),
    moe_intermediate_size = positive(true),
    intermediate_size = positive(false),
    decoder_sparse_step = positive(false, 1),
    mlp_only_layers = { type = "list", items = count(true), default = {} },
}

local function merged(...)
    local out = {}
    for _, t in ipairs({ ... }) do
        for k, v in pairs(t) do
            out[k] = v
        end
    end
    return out
end

families.qwen3_moe = {
    fields = gqa_fields(merged(QWEN_MOE, { attention_bias = flag() })),
    aliases = { num_local_experts = "num_experts" },
    build = function(c, name, names)
        local spec = base(c, name, names)
        spec.attention = gqa(c, { qk_norm = true, bias = attention_bias(c) })
        spec.dense = qwen_dense(c)
        spec.moe = { experts = c.num_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size, every = c.decoder_sparse_step }
        return "moe", spec
    end,
}

-- Qwen1.5-MoE / Qwen2-MoE: q/k/v biases (qkv_bias), one shared expert of its own width
-- behind a sigmoid gate.
families.qwen2_moe = {
    fields = gqa_fields(merged(QWEN_MOE, { qkv_bias = flag(true),
                                           shared_expert_intermediate_size = count(true) })),
    aliases = { num_local_experts = "num_experts" },
    build = function(c, name, names)
        local spec = base(c, name, with(names, { shared = "shared_expert" }))
        spec.attention = gqa(c, { bias = c.qkv_bias and "qkv" or "none" })
        spec.dense = qwen_dense(c)
        local shared = c.shared_expert_intermediate_size
        spec.moe = { experts = c.num_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size, every = c.decoder_sparse_step,
                     shared_experts = shared > 0 and 1 or 0,
                     shared_intermediate = shared > 0 and shared or nil, shared_gate = true }
        return "moe", spec
    end,
}

-- Qwen3-Next: Gated DeltaNet layers with a full (gated, Q/K-normed) attention layer every
-- full_attention_interval-th; transformers 5 writes the pattern as layer_types instead,
-- which hf.lua turns back into the interval (only that pattern is modelled).
families.qwen3_next = {
    fields = gqa_fields(merged(QWEN_MOE, {
        shared_expert_intermediate_size = count(true),
        linear_num_key_heads = positive(true),
        linear_num_value_heads = positive(true),
        linear_key_head_dim = positive(true),
        linear_value_head_dim = positive(true),
        linear_conv_kernel_dim = positive(true),
        full_attention_interval = positive(false, 4),
        layer_types = { type = "list", items = { type = "string", required = true,
                        values = { "linear_attention", "full_attention" } } },
    })),
    aliases = { num_local_experts = "num_experts" },
    check = function(c, fail)
        local types = c.layer_types
        if not types then
            return
        elseif #types ~= c.num_hidden_layers then
            fail("layer_types", string.format("%d entries for %d layers; one per layer",
                #types, c.num_hidden_layers))
        end
        local every
        for i, t in ipairs(types) do
            if t == "full_attention" then
                every = every or i
                if i % every ~= 0 then
                    break
                end
            end
        end
        for i, t in ipairs(types) do
            if every == nil or (t == "full_attention") ~= (i % every == 0) then
                fail("layer_types", "only a full-attention layer every n-th layer (n = "
                    .. "full_attention_interval) is modelled")
            end
        end
        c.full_attention_interval = every
    end,
    build = function(c, name, names)
        local spec = base(c, name, with(names, { shared = "shared_expert" }))
        spec.attention = gqa(c, { qk_norm = true, output_gate = true })
        spec.linear_attention = { full_every = c.full_attention_interval,
                                  key_heads = c.linear_num_key_heads,
                                  value_heads = c.linear_num_value_heads,
                                  key_head_dim = c.linear_key_head_dim,
                                  value_head_dim = c.linear_value_head_dim,
                                  conv_kernel = c.linear_conv_kernel_dim }
        spec.dense = qwen_dense(c)
        local shared = c.shared_expert_intermediate_size
        spec.moe = { experts = c.num_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size, every = c.decoder_sparse_step,
                     shared_experts = shared > 0 and 1 or 0,
                     shared_intermediate = shared > 0 and shared or nil, shared_gate = true }
        return "moe", spec
    end,
}

-- Mixtral and MiniMax-M2 keep Mixtral's module names: block_sparse_moe, experts w1 (gate),
-- w3 (up), w2 (down).
local MIXTRAL_NAMES = { mlp = "block_sparse_moe", expert_gate = "w1", expert_up = "w3",
                        expert_down = "w2" }

families.mixtral = {
    fields = gqa_fields({ intermediate_size = positive(true),
                          num_local_experts = positive(true),
                          num_experts_per_tok = positive(true) }),
    aliases = { num_experts = "num_local_experts" },
    build = function(c, name, names)
        local spec = base(c, name, with(names, MIXTRAL_NAMES))
        spec.attention = gqa(c)
        spec.moe = { experts = c.num_local_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.intermediate_size }
        return "moe", spec
    end,
}

-- MiniMax-M2: every layer MoE (intermediate_size is the experts' width), sigmoid routing
-- with an FP32 e_score_correction_bias beside the gate, Q/K norms over the whole projection
-- (qk_norm_type "per_layer"; "per_head" spans one head). MTP modules are not the model.
families.minimax_m2 = {
    fields = gqa_fields({ intermediate_size = positive(true),
                          num_local_experts = positive(true),
                          num_experts_per_tok = positive(true),
                          use_qk_norm = flag(true),
                          qk_norm_type = { type = "string", values = { "per_layer", "per_head" },
                                           default = "per_layer" },
                          use_routing_bias = flag(true) }),
    aliases = { num_experts = "num_local_experts" },
    build = function(c, name, names)
        local spec = base(c, name, with(names, with(MIXTRAL_NAMES,
            { score_bias = "e_score_correction_bias" })))
        spec.attention = gqa(c, { qk_norm = c.use_qk_norm,
                                  qk_norm_span = c.qk_norm_type == "per_layer" and "all"
                                      or "head" })
        spec.moe = { experts = c.num_local_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.intermediate_size, router_bias = c.use_routing_bias }
        return "moe", spec
    end,
}

-- gpt-oss: biases on q/k/v/o, attention sinks, alternating sliding-window and full
-- attention (layer_types: the same weights, so structure only, checked for its length),
-- a router with a bias, experts stacked and fused with biases, shipped in MXFP4 when
-- quantization_config says so (blocks.lua: refit moves BF16, `stored` records MXFP4).
families.gpt_oss = {
    fields = gqa_fields({
        intermediate_size = positive(true),
        num_local_experts = positive(true),
        num_experts_per_tok = positive(true),
        attention_bias = flag(true),
        sliding_window = positive(false),
        layer_types = { type = "list", items = { type = "string", required = true,
                        values = { "sliding_attention", "full_attention" } } },
        quantization_config = { type = "record", open = true, fields = {
            quant_method = { type = "string" },
        } },
    }),
    aliases = { num_experts = "num_local_experts", experts_per_token = "num_experts_per_tok" },
    check = function(c, fail)
        if c.layer_types and #c.layer_types ~= c.num_hidden_layers then
            fail("layer_types", string.format("%d entries for %d layers; one per layer",
                #c.layer_types, c.num_hidden_layers))
        end
        -- MXFP4 scales blocks of 32 along each expert projection's input dim.
        local q = c.quantization_config
        if q and q.quant_method == "mxfp4" then
            for _, f in ipairs({ "hidden_size", "intermediate_size" }) do
                if c[f] % 32 ~= 0 then
                    fail(f, string.format("%d is not a multiple of 32, the block MXFP4 scales",
                        c[f]))
                end
            end
        end
    end,
    build = function(c, name, names)
        local spec = base(c, name, with(names, { router = "router" }))
        spec.attention = gqa(c, { bias = attention_bias(c), sinks = true })
        local q = c.quantization_config
        spec.moe = { experts = c.num_local_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.intermediate_size, fused = true, linear_bias = true,
                     expert_bias = true,
                     stored = q and q.quant_method == "mxfp4" and "mxfp4" or nil }
        return "moe", spec
    end,
}

-- GLM-4.5 / 4.6 / 4.5-Air (Glm4MoeForCausalLM): DeepSeek-V3's MoE (first dense layers, one
-- shared expert, sigmoid routing with e_score_correction_bias) under GQA with q/k/v biases
-- (attention_bias; o_proj has none) and optional per-head Q/K norms (use_qk_norm). Partial
-- rotary changes no weight; the MTP layers (num_nextn_predict_layers) are not the model.
families.glm4_moe = {
    fields = gqa_fields({
        intermediate_size = positive(true),
        moe_intermediate_size = positive(true),
        n_routed_experts = positive(true),
        n_shared_experts = count(true),
        num_experts_per_tok = positive(true),
        first_k_dense_replace = count(true),
        attention_bias = flag(),
        use_qk_norm = flag(),
    }),
    aliases = { num_local_experts = "n_routed_experts" },
    build = function(c, name, names)
        local spec = base(c, name, names)
        spec.attention = gqa(c, { bias = c.attention_bias and "qkv" or "none",
                                  qk_norm = c.use_qk_norm })
        spec.dense = { layers = c.first_k_dense_replace, intermediate = c.intermediate_size }
        spec.moe = { experts = c.n_routed_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size,
                     shared_experts = c.n_shared_experts, router_bias = true }
        return "moe", spec
    end,
}

-- DeepSeek-V2/V3 and their descendants: MLA, first dense layers, shared experts. The MTP
-- layers of DeepSeek-V3 (num_nextn_predict_layers) are not part of the model, as in
-- transformers.
local function deepseek_fields(extra)
    return merged({
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
    }, extra or {})
end

local function deepseek(router_bias, indexer)
    return function(c, name, names)
        local spec = base(c, name, names)
        spec.attention = { kind = "mla", heads = c.num_attention_heads,
                           q_lora_rank = c.q_lora_rank, kv_lora_rank = c.kv_lora_rank,
                           qk_nope_head_dim = c.qk_nope_head_dim,
                           qk_rope_head_dim = c.qk_rope_head_dim, v_head_dim = c.v_head_dim,
                           indexer = indexer and { heads = c.index_n_heads,
                                                   head_dim = c.index_head_dim } or nil }
        spec.dense = { layers = c.first_k_dense_replace, intermediate = c.intermediate_size }
        spec.moe = { experts = c.n_routed_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.moe_intermediate_size,
                     shared_experts = c.n_shared_experts, router_bias = router_bias(c) }
        return "moe", spec
    end
end

-- deepseek_v3 and kimi_k2 share DeepSeek-V3's modelling code; its router always carries
-- e_score_correction_bias. DeepSeek-V2's carries it only under noaux_tc routing.
families.deepseek_v3 = {
    fields = deepseek_fields(),
    aliases = { num_local_experts = "n_routed_experts" },
    build = deepseek(function() return true end, false),
}
families.kimi_k2 = families.deepseek_v3

families.deepseek_v2 = {
    fields = deepseek_fields({ topk_method = { type = "string", default = "greedy" } }),
    aliases = { num_local_experts = "n_routed_experts" },
    build = deepseek(function(c) return c.topk_method == "noaux_tc" end, false),
}

-- DeepSeek-V3.2 (DSA): V3 plus the lightning indexer per layer. Defaults are DeepSeek's
-- inference ModelArgs (index_n_heads 64, index_head_dim 128, index_topk 2048); index_topk
-- (tokens kept per query) shapes no weight and is only checked.
families.deepseek_v32 = {
    fields = deepseek_fields({ index_n_heads = positive(false, 64),
                               index_head_dim = positive(false, 128),
                               index_topk = positive(false, 2048) }),
    aliases = { num_local_experts = "n_routed_experts" },
    json = { ["attention.indexer"] = "q_lora_rank" },
    build = deepseek(function() return true end, true),
}

-- Llama 4's language model (llama4_text; Llama4ForConditionalGeneration nests it as
-- text_config): MoE on every interleave_moe_layer_step-th layer (or the layers moe_layers
-- lists), each with one shared expert as wide as the routed ones; the other layers are
-- dense of width intermediate_size_mlp. Experts are stacked and fused in the checkpoint,
-- under feed_forward. Its Q/K norm is a weightless L2 norm.
families.llama4_text = {
    fields = gqa_fields({
        intermediate_size = positive(true),
        intermediate_size_mlp = positive(false),
        num_local_experts = positive(true),
        num_experts_per_tok = positive(true),
        interleave_moe_layer_step = positive(false, 1),
        moe_layers = layer_list(),
        attention_bias = flag(),
    }),
    aliases = { num_experts = "num_local_experts" },
    json = { ["dense.intermediate"] = "intermediate_size_mlp",
             ["moe.every"] = "interleave_moe_layer_step", ["dense.indices"] = "moe_layers" },
    build = function(c, name, names)
        local spec = base(c, name, with(names, { mlp = "feed_forward", router = "router",
                                                 shared = "shared_expert" }))
        spec.attention = gqa(c, { bias = attention_bias(c) })
        local every, indices = c.interleave_moe_layer_step, {}
        if c.moe_layers then
            -- transformers: an explicit list overrides the step.
            local moe = {}
            for _, i in ipairs(c.moe_layers) do
                moe[i] = true
            end
            for i = 0, c.num_hidden_layers - 1 do
                if not moe[i] then
                    indices[#indices + 1] = i
                end
            end
            every = 1
        end
        if every > 1 or #indices > 0 then
            spec.dense = { indices = indices, intermediate = c.intermediate_size_mlp }
        end
        spec.moe = { experts = c.num_local_experts, experts_per_token = c.num_experts_per_tok,
                     intermediate = c.intermediate_size, every = every, shared_experts = 1,
                     fused = true }
        return "moe", spec
    end,
}

-- Llama 4 Scout / Maverick (Llama4ForConditionalGeneration): the language model in
-- text_config, the vision tower (vision.lua) in vision_config.
local LLAMA4_VISION = {
    hidden_size = positive(true),
    num_hidden_layers = positive(true),
    num_attention_heads = positive(true),
    intermediate_size = positive(true),
    patch_size = positive(true),
    image_size = positive(true),
    num_channels = positive(false, 3),
    vision_output_dim = positive(true),
    projector_input_dim = positive(true),
    projector_output_dim = positive(true),
}

families.llama4 = {
    fields = {},
    nested = { key = "text_config", types = { "llama4_text" }, default = "llama4_text" },
    vision = {
        fields = LLAMA4_VISION,
        json = { ["vision.heads"] = "num_attention_heads" },
        build = function(v, text, name, family)
            return { name = name, family = family, hidden = v.hidden_size,
                     layers = v.num_hidden_layers, heads = v.num_attention_heads,
                     intermediate = v.intermediate_size, patch = v.patch_size,
                     image = v.image_size, channels = v.num_channels,
                     adapter_in = v.projector_input_dim, adapter_out = v.projector_output_dim,
                     output = v.vision_output_dim, text_hidden = text.hidden_size }
        end,
    },
}

-- Nemotron-H, Nemotron Nano v2 and Nemotron 3 (model_type nemotron_h; NVIDIA's
-- configuration_nemotron_h.py, whose config.json keys are its attribute names: n_groups,
-- conv_kernel, use_conv_bias, as it renames mamba_n_groups, mamba_d_conv, mamba_conv_bias):
-- one block per layer as hybrid_override_pattern says (hybrid.lua). Nemotron 3's E layers
-- route over n_routed_experts with a score bias beside one shared MLP of
-- moe_shared_expert_intermediate_size.
families.nemotron_h = {
    fields = {
        hybrid_override_pattern = { type = "string", required = true },
        num_key_value_heads = positive(false),
        head_dim = positive(false, 128),
        intermediate_size = positive(false),
        attention_bias = flag(),
        mamba_num_heads = positive(true),
        mamba_head_dim = positive(true),
        ssm_state_size = positive(false, 128),
        n_groups = positive(false, 8),
        conv_kernel = positive(false, 4),
        use_conv_bias = flag(true),
        mamba_proj_bias = flag(),
        n_routed_experts = positive(false),
        num_experts_per_tok = positive(false),
        moe_intermediate_size = positive(false),
        n_shared_experts = count(false, 0),
        moe_shared_expert_intermediate_size = positive(false),
    },
    aliases = { mamba_n_groups = "n_groups", mamba_d_conv = "conv_kernel",
                mamba_conv_bias = "use_conv_bias" },
    json = { pattern = "hybrid_override_pattern", intermediate = "intermediate_size",
             ["attention.kv_heads"] = "num_key_value_heads", ["mamba.groups"] = "n_groups",
             moe = "n_routed_experts", ["moe.experts_per_token"] = "num_experts_per_tok" },
    check = function(c, fail)
        if #c.hybrid_override_pattern ~= c.num_hidden_layers then
            fail("hybrid_override_pattern", string.format("%d characters for %d layers "
                .. "(num_hidden_layers)", #c.hybrid_override_pattern, c.num_hidden_layers))
        end
    end,
    build = function(c, name)
        local spec = { name = name, family = c.model_type, hidden = c.hidden_size,
                       vocab = c.vocab_size, tie_embeddings = c.tie_word_embeddings,
                       pattern = c.hybrid_override_pattern, intermediate = c.intermediate_size,
                       attention = { heads = c.num_attention_heads,
                                     kv_heads = c.num_key_value_heads or c.num_attention_heads,
                                     head_dim = c.head_dim, bias = c.attention_bias },
                       mamba = { heads = c.mamba_num_heads, head_dim = c.mamba_head_dim,
                                 state = c.ssm_state_size, groups = c.n_groups,
                                 conv_kernel = c.conv_kernel, conv_bias = c.use_conv_bias,
                                 proj_bias = c.mamba_proj_bias } }
        if c.hybrid_override_pattern:find("E", 1, true) then
            spec.moe = { experts = c.n_routed_experts, experts_per_token = c.num_experts_per_tok,
                         intermediate = c.moe_intermediate_size,
                         shared_experts = c.n_shared_experts,
                         shared_intermediate = c.moe_shared_expert_intermediate_size }
        end
        return "hybrid", spec
    end,
}

-- Gemma 3 4B-27B (Gemma3ForConditionalGeneration): the language model in text_config, under
-- language_model.; its SigLIP tower is not modelled (part "vision" is refused).
families.gemma3 = {
    fields = {},
    nested = { key = "text_config", types = { "gemma3_text" }, default = "gemma3_text" },
}

-- Kimi K2.5 (KimiK25ForConditionalGeneration): Kimi K2's DeepSeek-V3 language model in
-- text_config, under language_model.; its MoonViT tower is not modelled.
families.kimi_k25 = {
    fields = {},
    nested = { key = "text_config", types = { "deepseek_v3", "kimi_k2" },
               default = "deepseek_v3" },
}

return families
