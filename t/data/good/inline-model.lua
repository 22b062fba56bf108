-- A scenario that builds its model inline.
return {
    model = transformer.dense{
        name = "tiny", family = "llama", hidden = 64, layers = 2, vocab = 100,
        intermediate = 128, attention = { kind = "gqa", heads = 4, kv_heads = 2 },
    },
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, pp = 2 },
    infer = { gpus = 2, first_gpu = 2, tp = 2 },
}
