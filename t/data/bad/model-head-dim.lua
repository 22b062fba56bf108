-- head_dim = 2^40 stored negative parameter counts.
local model = transformer.dense{
    name = "big", family = "llama", hidden = 64, layers = 1, vocab = 100, intermediate = 128,
    attention = { kind = "gqa", heads = 4,
                  head_dim = 1 << 40 },
}
return model
