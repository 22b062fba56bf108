-- hidden = 2^32 (a float in Lua) would overflow element counts in C.
local model = transformer.dense{
    name = "big", family = "llama", layers = 1, vocab = 100, intermediate = 128,
    hidden = 2^32,
    attention = { kind = "gqa", heads = 1 },
}
return model
