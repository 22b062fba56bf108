-- A DeepSeek-V3-family model scaled down for the executor's tests: MLA attention with the
-- query low-rank path, one dense layer first (first_k_dense_replace), then MoE layers with
-- 8 routed experts, one shared expert and the noaux_tc router bias. Shapes are small
-- (about 1.6 M parameters) so 8 ranks on 2 cores replay it in well under a second; the
-- structure is DeepSeek-V3's (models/deepseek-v3.lua).
return transformer.moe{
    name = "tiny-dsv3",
    family = "deepseek_v3",
    hidden = 128,
    layers = 4,
    vocab = 2048,
    attention = {
        kind = "mla",
        heads = 4,
        q_lora_rank = 64,
        kv_lora_rank = 32,
        qk_nope_head_dim = 16,
        qk_rope_head_dim = 8,
        v_head_dim = 16,
    },
    dense = { layers = 1, intermediate = 256 },
    moe = {
        experts = 8,
        experts_per_token = 2,
        intermediate = 64,
        shared_experts = 1,
        router_bias = true,
    },
}
