-- The node count written without its name.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
