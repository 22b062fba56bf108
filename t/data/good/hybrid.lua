-- The hybrid strategy with the default policy.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, pp = 16, ep = 16 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
    strategy = "hybrid",
}
