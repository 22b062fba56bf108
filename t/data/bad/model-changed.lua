-- A model file that changes the model its constructor checked.
local model = transformer.dense{
    name = "tiny", family = "llama", hidden = 64, layers = 2, vocab = 100,
    intermediate = 128, attention = { kind = "gqa", heads = 4 },
}
model.layers = 1 << 40
return model
