-- Qwen3-8B (dense): GQA with 8 KV heads and per-head q/k norms, SwiGLU, untied
-- embeddings (only Qwen3 0.6B-4B tie them). Computed total 8.191B, 16.4 GB BF16.
--
-- Sources: citsjtu2020/LLM-Prof sglang/Model_Config.md; Chen-Oliver/qwen3-8b-base
-- config.json and README.md (head_dim 128, 8 KV heads, vocab 151936,
-- tie_word_embeddings false for 8B/14B/32B). Public:
-- https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json.
return transformer.dense{
    name = "qwen3-8b",
    family = "qwen3",         -- model_type
    hidden = 4096,            -- hidden_size
    layers = 36,              -- num_hidden_layers
    vocab = 151936,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    intermediate = 12288,     -- intermediate_size
    attention = {
        kind = "gqa",
        heads = 32,           -- num_attention_heads
        kv_heads = 8,         -- num_key_value_heads
        head_dim = 128,       -- head_dim
        qk_norm = true,       -- Qwen3 attention: q_norm, k_norm
    },
}
