-- Kimi K2 (1T total, 32B active): DeepSeek-V3's architecture with half the attention heads,
-- 384 routed experts and one dense layer. Computed total 1026.4B, 32.86B active.
--
-- Sources: MoonshotAI/Kimi-K2 README.md (61 layers incl. 1 dense, hidden 7168, expert
-- hidden 2048, 64 heads, 384 experts / 8 selected / 1 shared, MLA); config.json of
-- moonshotai/Kimi-K2-Instruct-0905 as reported in ParagEkbote/hf-model-inspector
-- model_inspection_report.md (model_type kimi_k2, vocab 163840, intermediate 18432, 64 heads,
-- untied embeddings). MLA ranks, first_k_dense_replace 1 and noaux_tc routing from config
-- copies consistent with the README. Public: https://github.com/MoonshotAI/Kimi-K2 and
-- https://huggingface.co/moonshotai/Kimi-K2-Instruct-0905/blob/main/config.json.
return transformer.moe{
    name = "kimi-k2",
    family = "kimi_k2",       -- model_type
    hidden = 7168,            -- hidden_size
    layers = 61,              -- num_hidden_layers
    vocab = 163840,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    attention = {
        kind = "mla",
        heads = 64,           -- num_attention_heads (= num_key_value_heads)
        q_lora_rank = 1536,   -- MLA ranks as DeepSeek-V3
        kv_lora_rank = 512,
        qk_nope_head_dim = 128,
        qk_rope_head_dim = 64,
        v_head_dim = 128,
    },
    dense = {
        layers = 1,           -- first_k_dense_replace
        intermediate = 18432, -- intermediate_size
    },
    moe = {
        experts = 384,        -- n_routed_experts
        experts_per_token = 8, -- num_experts_per_tok
        intermediate = 2048,  -- moe_intermediate_size
        shared_experts = 1,   -- n_shared_experts
        router_bias = true,   -- topk_method noaux_tc: e_score_correction_bias
    },
}
