-- A small model with two billion layers: refused before it is built.
local model = transformer.dense{
    name = "deep", family = "llama", hidden = 8, vocab = 8, intermediate = 8,
    layers = 2147483647,
    attention = { kind = "gqa", heads = 1 },
}
return model
