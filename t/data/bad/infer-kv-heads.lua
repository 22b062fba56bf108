-- 4 KV heads neither split over nor replicate evenly across TP 6.
return {
    model = transformer.dense{
        name = "tiny", family = "llama", hidden = 96, layers = 2, vocab = 100,
        intermediate = 128, attention = { kind = "gqa", heads = 12, kv_heads = 4 },
    },
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 4, tp = 4 },
    infer = { gpus = 6, first_gpu = 8,
              tp = 6 },
}
