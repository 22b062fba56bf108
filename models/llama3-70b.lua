-- Llama 3.1 70B (dense; Llama 3 70B has the same shapes, with 8K context).
-- GQA with 8 KV heads, SwiGLU, untied embeddings, no biases.
-- Computed total 70.554B, 141.1 GB BF16.
--
-- Sources: meta-llama/llama-models models/llama3_1/api/sku_list.py (dim 8192, 80 layers,
-- 64 heads, 8 KV heads, ffn_dim_multiplier 1.3, multiple_of 4096, vocab 128256); the FFN
-- width follows Meta's rule (4d, x2/3, x multiplier, rounded up to multiple_of) = 28672,
-- which is the HF config's intermediate_size (Llama-3.1-8B config in citsjtu2020/LLM-Prof
-- sglang/Model_Config.md). Public: https://github.com/meta-llama/llama-models and
-- https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json.
return transformer.dense{
    name = "llama3-70b",
    family = "llama",         -- model_type
    hidden = 8192,            -- hidden_size (dim)
    layers = 80,              -- num_hidden_layers (n_layers)
    vocab = 128256,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    intermediate = 28672,     -- intermediate_size
    attention = {
        kind = "gqa",
        heads = 64,           -- num_attention_heads (n_heads)
        kv_heads = 8,         -- num_key_value_heads (n_kv_heads); head_dim = hidden / heads
    },
}
