-- Kimi K3: NOT PUBLIC. An extrapolation of the Kimi K2 / DeepSeek-V3 family sized to the
-- figure refit plans for: about 2.8T parameters, 5.6 TB in BF16. Treat every number here
-- as a placeholder until Moonshot publishes a config.json.
--
-- What is public (all unverified; no model card or config.json exists):
--   * press: "exceeds 2.5 trillion parameters", >1M context;
--   * a third-party offline "report-based" fallback template for moonshotai/Kimi-K3
--     (model_type kimi_k3): 93 layers, hidden 7168, 96 MLA heads (q_lora 1536, kv_lora 512,
--     nope 128, rope 64, v 128), first_k_dense_replace 1 with dense intermediate 33792,
--     896 routed experts, 16 per token, 2 shared, moe_intermediate 3072,
--     routed_expert_hidden_size 3584, vocab 163840, BF16. This file takes those numbers.
--
-- Assumptions (each one ours):
--   1. Routed experts compute in a 3584-wide latent (routed_expert_hidden_size): each MoE
--      layer has a latent down projection 7168 -> 3584 before the experts and an up
--      projection 3584 -> 7168 after them (mlp.latent_in_proj / mlp.latent_out_proj,
--      names invented by refit; role dense_ffn, column / row parallel). With 7168-wide
--      experts the model would be ~5.5T, so the latent reading is the one that fits 2.8T.
--   2. Shared experts compute at the full hidden width 7168; the 2 shared experts are one
--      shared expert of width 2 x 3072 = 6144, as DeepSeek stores them.
--   3. Attention: the template's hybrid attention (full MLA every 4th layer, KDA linear
--      attention elsewhere) and the MLA output gate are modelled as plain MLA in every
--      layer: KDA tensor shapes are not available and MLA's size stands in for them.
--   4. Routing as Kimi K2: sigmoid/noaux_tc with mlp.gate.e_score_correction_bias (FP32).
--   5. Untied embeddings, as every Kimi model; no MTP layer.
-- Result: 2756.7B total (2.8T -1.5%), 5.51 TB BF16, 82.6B active (16 of 896 experts).
return transformer.moe{
    name = "kimi-k3",
    family = "kimi_k3",           -- model_type of the template
    hidden = 7168,                -- hidden_size
    layers = 93,                  -- num_hidden_layers
    vocab = 163840,               -- vocab_size (as Kimi K2)
    tie_embeddings = false,       -- assumption 5
    attention = {                 -- assumption 3
        kind = "mla",
        heads = 96,               -- num_attention_heads
        q_lora_rank = 1536,
        kv_lora_rank = 512,
        qk_nope_head_dim = 128,
        qk_rope_head_dim = 64,
        v_head_dim = 128,
    },
    dense = {
        layers = 1,               -- first_k_dense_replace
        intermediate = 33792,     -- intermediate_size of the dense layer
    },
    moe = {
        experts = 896,            -- n_routed_experts
        experts_per_token = 16,   -- num_experts_per_tok
        intermediate = 3072,      -- moe_intermediate_size
        shared_experts = 2,       -- n_shared_experts (assumption 2)
        router_bias = true,       -- assumption 4
        latent = 3584,            -- routed_expert_hidden_size (assumption 1)
    },
}
