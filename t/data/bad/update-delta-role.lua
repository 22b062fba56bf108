-- A density keyed by a role the model does not have a name for.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    update = { kind = "delta", density = { experts = 0.01, default = 0.05 } },
}
