-- Every tensor has at most 2^48 elements, but the model more than 2^53 parameters.
return transformer.dense{
    name = "big", family = "llama", layers = 5, vocab = 1 << 24, intermediate = 1 << 24,
    hidden = 1 << 24,
    attention = { kind = "gqa", heads = 1 },
}
