-- Megatron: 32 attention heads do not split over TP 3.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 6, tp = 3 },
    infer = { gpus = 8, first_gpu = 8 },
}
