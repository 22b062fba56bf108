-- attention.haeds is a typo of attention.heads.
return transformer.moe{
    name = "bad", family = "qwen3_moe", hidden = 64, layers = 2, vocab = 100,
    attention = {
        kind = "gqa",
        haeds = 4,
    },
    moe = { experts = 8, experts_per_token = 2, intermediate = 32 },
}
