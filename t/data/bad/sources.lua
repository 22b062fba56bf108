-- No such way of choosing sources: anything but balanced or local is an error.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    sources = "nearest",
}
