-- `dens` is a typo of `dense`.
return transformer.dens{
    name = "tiny", family = "llama", hidden = 64, layers = 2, vocab = 100,
    intermediate = 128, attention = { kind = "gqa", heads = 4 },
}
