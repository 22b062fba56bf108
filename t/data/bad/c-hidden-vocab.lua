-- hidden = vocab = 2^32: the embedding has 2^64 elements, past any 64-bit count (the C
-- side refuses it even where models/lib does not; t/sizes.sh).
return {
    model = transformer.dense{
        name = "huge", family = "llama", hidden = 4294967296, vocab = 4294967296,
        layers = 1,
        intermediate = 128, attention = { kind = "gqa", heads = 4 },
    },
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2 },
    infer = { gpus = 2 },
}
