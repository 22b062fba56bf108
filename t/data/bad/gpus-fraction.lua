-- A GPU count given as a float that is not integral.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 7.5, first_gpu = 8 },
}
