-- No attention kind "mha".
local model = transformer.dense{
    name = "bad", family = "llama", hidden = 64, layers = 2, vocab = 100, intermediate = 128,
    attention = { heads = 4,
                  kind = "mha" },
}
return model
