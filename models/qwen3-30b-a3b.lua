-- Qwen3-30B-A3B (30B total, 3B active): the small Qwen3 MoE used in NeMo-RL's tables.
-- Computed total 30.53B, 3.35B active.
--
-- Sources: citsjtu2020/LLM-Prof sglang/Model_Config.md (Qwen3-30B-A3B config: hidden 2048,
-- 48 layers, 32/4 heads, head_dim 128, 128 experts, top-8, moe_intermediate 768, vocab
-- 151936, untied); module names as Qwen3-235B-A22B (transformers' qwen3_moe). Public:
-- https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json.
return transformer.moe{
    name = "qwen3-30b-a3b",
    family = "qwen3_moe",     -- model_type
    hidden = 2048,            -- hidden_size
    layers = 48,              -- num_hidden_layers
    vocab = 151936,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    attention = {
        kind = "gqa",
        heads = 32,           -- num_attention_heads
        kv_heads = 4,         -- num_key_value_heads
        head_dim = 128,       -- head_dim
        qk_norm = true,       -- Qwen3 attention: q_norm, k_norm
    },
    moe = {
        experts = 128,        -- num_experts
        experts_per_token = 8, -- num_experts_per_tok
        intermediate = 768,   -- moe_intermediate_size
    },
}
