-- A Qwen3-MoE-family model scaled down for the executor's tests: GQA with QK norm, every
-- layer MoE with 8 experts and no shared expert (models/qwen3-30b-a3b.lua's structure).
return transformer.moe{
    name = "tiny-qwen3-moe",
    family = "qwen3_moe",
    hidden = 128,
    layers = 4,
    vocab = 2048,
    attention = { kind = "gqa", heads = 4, kv_heads = 2, head_dim = 32, qk_norm = true },
    moe = { experts = 8, experts_per_token = 2, intermediate = 64 },
}
