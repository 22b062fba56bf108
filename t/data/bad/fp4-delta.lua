-- A delta onto 4-bit engines: its values would be half a byte each.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2, dtype = "mxfp4" },
    update = { kind = "delta", density = 0.05 },
}
