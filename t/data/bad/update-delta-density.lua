-- A density finer than a part per million.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    update = { kind = "delta",
               density = 0.0000001 },
}
