-- Each size is in range, but embed_tokens would have 2^51 elements.
local model = transformer.dense{
    name = "big", family = "llama", layers = 1, intermediate = 128,
    hidden = 1 << 20, vocab = 2147483647,
    attention = { kind = "gqa", heads = 1 },
}
return model
