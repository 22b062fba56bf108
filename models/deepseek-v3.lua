-- DeepSeek-V3 (671B total, 37B active; DeepSeek-R1 and V3-0324 share the shape).
-- The main model only: the MTP module (model.layers.61.*, num_nextn_predict_layers = 1,
-- 11.6B more) is left out, as transformers ignores it on load and NeMo-RL's DeepSeek-V3
-- recipes train with mtp_num_layers = 0. Computed total 671.03B, 37.55B active.
--
-- Sources: config.json of deepseek-ai/DeepSeek-V3 (copy in aliyun/SimAI
-- vidur-alibabacloud/data/hf_configs/deepseek_v3_config.json); tensor names from
-- huggingface/transformers src/transformers/models/deepseek_v3/modular_deepseek_v3.py;
-- deepseek-ai/DeepSeek-V3 README_WEIGHTS.md. Public:
-- https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/ config.json and README_WEIGHTS.md
-- there.
return transformer.moe{
    name = "deepseek-v3",
    family = "deepseek_v3",   -- model_type
    hidden = 7168,            -- hidden_size
    layers = 61,              -- num_hidden_layers (MTP layer 61 excluded)
    vocab = 129280,           -- vocab_size
    tie_embeddings = false,   -- tie_word_embeddings
    attention = {
        kind = "mla",
        heads = 128,          -- num_attention_heads (= num_key_value_heads)
        q_lora_rank = 1536,
        kv_lora_rank = 512,
        qk_nope_head_dim = 128,
        qk_rope_head_dim = 64,
        v_head_dim = 128,
    },
    dense = {
        layers = 3,           -- first_k_dense_replace: layers 0-2 dense
        intermediate = 18432, -- intermediate_size
    },
    moe = {
        experts = 256,        -- n_routed_experts (moe_layer_freq 1: layers 3-60)
        experts_per_token = 8, -- num_experts_per_tok
        intermediate = 2048,  -- moe_intermediate_size
        shared_experts = 1,   -- n_shared_experts
        router_bias = true,   -- topk_method noaux_tc: e_score_correction_bias
    },
}
