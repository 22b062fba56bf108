-- all-linear on a MoE model: the routed experts' stacked weights are not modelled.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2, ep = 4 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    update = { kind = "lora", rank = 8, targets = { "all-linear" } },
}
