-- Qwen3.8 2.4T-A95B: NOT PUBLIC. An extrapolation of the Qwen3-MoE family sized to the
-- figures refit plans for: 2.4T parameters in total, 95B active. Treat every number here
-- as a placeholder.
--
-- What is public (no model card or config.json exists): one unsourced provider-list comment calls
-- "Qwen3.8-Max-Preview" a "2.4 trillion parameter MoE, 1M context"; no config, no layer
-- count, no expert count. "A95B" (95B active) is the figure refit was asked to plan for.
--
-- Assumptions (each one ours):
--   1. Architecture of Qwen3-235B-A22B (transformers' qwen3_moe): every layer MoE, no shared
--      expert, GQA with per-head q_norm/k_norm, head_dim 128, no biases, untied embeddings,
--      vocab 151936, and its depth of 94 layers.
--   2. Width grown to the DeepSeek-V3 / Kimi scale: hidden 7168; 96 query heads, so the
--      query is 12288 wide, 1.7x hidden (Qwen3-235B: 2x, Qwen3-32B: 1.6x); 8 KV heads, as
--      the Qwen3 dense models.
--   3. 384 routed experts (Kimi K2's count), 12 per token: the 1/32 sparsity of DeepSeek-V3
--      (8 of 256), which with these widths puts the active count at 95B.
--   4. moe_intermediate_size 3072 (2x Qwen3-235B's 1536), chosen so the total lands on 2.4T.
-- Result: 2404.9B total (2.4T +0.2%), 4.81 TB BF16, 94.89B active (95B -0.1%).
return transformer.moe{
    name = "qwen3.8-2.4t-a95b",
    family = "qwen3_moe",         -- assumption 1
    hidden = 7168,                -- assumption 2
    layers = 94,                  -- assumption 1
    vocab = 151936,               -- assumption 1
    tie_embeddings = false,       -- assumption 1
    attention = {
        kind = "gqa",
        heads = 96,               -- assumption 2
        kv_heads = 8,             -- assumption 2
        head_dim = 128,           -- assumption 1
        qk_norm = true,           -- assumption 1
    },
    moe = {
        experts = 384,            -- assumption 3
        experts_per_token = 12,   -- assumption 3
        intermediate = 3072,      -- assumption 4
    },
}
