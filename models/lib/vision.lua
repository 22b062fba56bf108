-- vision.lua: the vision tower of a multimodal checkpoint as a model of its own (the
-- Lua -> C contract's form), so refit can plan its transfer apart from the language model.

-- One tower is modelled: Llama 4's (transformers' Llama4VisionModel, its pixel-shuffle
-- adapter and the multi_modal_projector into the language model). It is a pre-LayerNorm
-- ViT: weights and biases on every projection and norm, a GELU MLP (fc1, fc2). Placement
-- follows vLLM's Llama 4 vision encoder: q/k/v, fc1, the patch embedding and the projector
-- column-parallel, o_proj and fc2 row-parallel, embeddings and norms replicated. Engines
-- keep vision towers in BF16, so no tensor is `quant`. Layers: the class and positional
-- embeddings, the patch embedding and layernorm_pre come before layer 0 (-1);
-- layernorm_post, the adapter and the projector after the last (`layers`).

local schema = require("schema")
local blocks = require("blocks")
local transformer = require("transformer")

local vision = {}

local function positive()
    return { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, required = true }
end

local LLAMA4 = { type = "record", fields = {
    name = { type = "string", required = true },
    family = { type = "string", required = true },
    hidden = positive(),          -- vision_config.hidden_size
    layers = positive(),          -- vision_config.num_hidden_layers
    heads = positive(),           -- vision_config.num_attention_heads
    intermediate = positive(),    -- vision_config.intermediate_size
    patch = positive(),           -- vision_config.patch_size
    image = positive(),           -- vision_config.image_size
    channels = positive(),        -- vision_config.num_channels
    adapter_in = positive(),      -- vision_config.projector_input_dim
    adapter_out = positive(),     -- vision_config.projector_output_dim
    output = positive(),          -- vision_config.vision_output_dim
    text_hidden = positive(),     -- text_config.hidden_size
} }

local function layer_norm(model, name, size, layer)
    blocks.norm(model, name .. ".weight", size, layer)
    blocks.norm(model, name .. ".bias", size, layer)
end

-- Llama 4's vision tower from a validated-by-the-caller spec (LLAMA4's fields); `site`
-- says where the spec came from (the config.json).
function vision.llama4(spec, site)
    local s = schema.validate(spec, LLAMA4, site, "")
    if s.hidden % s.heads ~= 0 then
        schema.raise(site, "vision.heads", string.format(
            "hidden %d is not a multiple of heads %d", s.hidden, s.heads))
    end
    local model = { kind = "model", name = s.name, family = s.family, source = site.file,
                    layers = s.layers, experts = 0, experts_per_token = 0, tensors = {},
                    attention = { kind = "gqa", heads = s.heads, kv_heads = s.heads },
                    part = "vision", site = site }
    local h, v, L = s.hidden, "vision_model.", s.layers
    -- The patches of a square image plus the class token.
    local side = s.image // s.patch
    local positions = side * side + 1
    blocks.add(model, v .. "class_embedding", { h }, "embedding", -1, "replicated", false)
    blocks.add(model, v .. "patch_embedding.linear.weight", { h, s.channels * s.patch * s.patch },
        "embedding", -1, "column", false)
    blocks.add(model, v .. "positional_embedding_vlm", { positions, h },
        "embedding", -1, "replicated", false)
    layer_norm(model, v .. "layernorm_pre", h, -1)
    for layer = 0, L - 1 do
        local p = string.format("%smodel.layers.%d.", v, layer)
        for _, proj in ipairs({ "q_proj", "k_proj", "v_proj" }) do
            blocks.linear(model, p .. "self_attn." .. proj, h, h, "attention", layer, "column",
                true, false)
        end
        blocks.linear(model, p .. "self_attn.o_proj", h, h, "attention", layer, "row", true,
            false)
        blocks.linear(model, p .. "mlp.fc1", s.intermediate, h, "dense_ffn", layer, "column",
            true, false)
        blocks.linear(model, p .. "mlp.fc2", h, s.intermediate, "dense_ffn", layer, "row", true,
            false)
        layer_norm(model, p .. "input_layernorm", h, layer)
        layer_norm(model, p .. "post_attention_layernorm", h, layer)
    end
    layer_norm(model, v .. "layernorm_post", h, L)
    -- Pixel shuffle folds 2x2 patches into one token of intermediate width before fc1.
    local a = v .. "vision_adapter.mlp."
    blocks.linear(model, a .. "fc1", s.adapter_in, s.intermediate, "dense_ffn", L, "column",
        false, false)
    blocks.linear(model, a .. "fc2", s.adapter_out, s.adapter_out, "dense_ffn", L, "row", false,
        false)
    blocks.linear(model, "multi_modal_projector.linear_1", s.text_hidden, s.output, "dense_ffn",
        L, "column", false, false)
    model.site = nil
    return transformer.check(model, site, nil)
end

return vision
