-- There is no dgx-h1000 preset.
return {
    model = "qwen3-8b",
    cluster = {
        system = "dgx-h1000",
        nodes = 2,
    },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
