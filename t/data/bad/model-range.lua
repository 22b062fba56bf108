-- More experts per token than experts (built into a local: not a tail call).
local model = transformer.moe{
    name = "bad", family = "deepseek_v3", hidden = 64, layers = 2, vocab = 100,
    attention = { kind = "mla", heads = 4, kv_lora_rank = 16, qk_nope_head_dim = 8,
                  qk_rope_head_dim = 8, v_head_dim = 8 },
    moe = {
        experts = 256,
        experts_per_token = 300,
        intermediate = 32,
    },
}
return model
