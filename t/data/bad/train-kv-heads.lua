-- Megatron: qwen3-8b's 8 query groups (KV heads) do not split over TP 16.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16,
              tp = 16 },
    infer = { gpus = 8, first_gpu = 16 },
}
