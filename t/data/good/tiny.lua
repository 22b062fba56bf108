-- A model built into a local before it is returned (not a tail call).
local model = transformer.dense{
    name = "tiny", family = "llama", hidden = 64, layers = 2, vocab = 100,
    intermediate = 128, attention = { kind = "gqa", heads = 4 },
}
return model
