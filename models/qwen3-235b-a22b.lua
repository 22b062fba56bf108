-- Qwen3-235B-A22B (235B total, 22B active): every layer MoE, GQA with per-head q/k norms,
-- no shared expert. Computed total 235.09B, 22.19B active. The 2507 refresh (longer
-- context) has the same shapes.
--
-- Sources: config.json of Qwen/Qwen3-235B-A22B (copy in aliyun/SimAI
-- vidur-alibabacloud/data/hf_configs/qwen3-235B-A22B_config.json); SimAI
-- docs/SimAI_1.6_Tech_Report.md; module names from huggingface/transformers
-- src/transformers/models/qwen3_moe/modular_qwen3_moe.py. Public:
-- https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json.
return transformer.moe{
    name = "qwen3-235b-a22b",
    family = "qwen3_moe",     -- model_type
    hidden = 4096,            -- hidden_size
    layers = 94,              -- num_hidden_layers (decoder_sparse_step 1, no mlp_only_layers)
    vocab = 151936,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    attention = {
        kind = "gqa",
        heads = 64,           -- num_attention_heads
        kv_heads = 4,         -- num_key_value_heads
        head_dim = 128,       -- head_dim (q width 8192 differs from hidden)
        qk_norm = true,       -- Qwen3 attention: q_norm, k_norm
    },
    moe = {
        experts = 128,        -- num_experts
        experts_per_token = 8, -- num_experts_per_tok
        intermediate = 1536,  -- moe_intermediate_size (intermediate_size 12288 unused)
    },
}
