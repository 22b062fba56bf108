-- moe has no experts count.
return transformer.moe{
    name = "bad", family = "qwen3_moe", hidden = 64, layers = 2, vocab = 100,
    attention = { kind = "gqa", heads = 4 },
    moe = { experts_per_token = 2,
            intermediate = 32 },
}
