-- Llama 3.1 405B (dense; there is no Llama 3.0 405B).
-- GQA with 8 KV heads, SwiGLU, untied embeddings, no biases.
-- Computed total 405.853B, 811.7 GB BF16.
--
-- Sources: meta-llama/llama-models models/llama3_1/api/sku_list.py (dim 16384, 126 layers,
-- 128 heads, 8 KV heads, ffn_dim_multiplier 1.2, multiple_of 4096, vocab 128256); the FFN
-- width follows Meta's rule (4d, x2/3, x multiplier, rounded up to multiple_of) = 53248,
-- which is the HF config's intermediate_size (Llama-3.1-8B config in citsjtu2020/LLM-Prof
-- sglang/Model_Config.md). Public: https://github.com/meta-llama/llama-models and
-- https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json.
return transformer.dense{
    name = "llama3-405b",
    family = "llama",         -- model_type
    hidden = 16384,           -- hidden_size (dim)
    layers = 126,             -- num_hidden_layers (n_layers)
    vocab = 128256,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    intermediate = 53248,     -- intermediate_size
    attention = {
        kind = "gqa",
        heads = 128,          -- num_attention_heads (n_heads)
        kv_heads = 8,         -- num_key_value_heads (n_kv_heads); head_dim = hidden / heads
    },
}
