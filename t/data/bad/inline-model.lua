-- A model built inline with zero layers.
return {
    model = transformer.dense{
        name = "tiny", family = "llama", hidden = 64, vocab = 100,
        layers = 0,
        intermediate = 128, attention = { kind = "gqa", heads = 4 },
    },
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2 },
    infer = { gpus = 2 },
}
