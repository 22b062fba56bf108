-- A helper value must be local.
hidden = 64
return transformer.dense{
    name = "tiny", family = "llama", hidden = hidden, layers = 2, vocab = 100,
    intermediate = 128, attention = { kind = "gqa", heads = 4 },
}
