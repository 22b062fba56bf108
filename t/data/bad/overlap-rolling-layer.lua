-- Rolling engines with a landing granularity: a rolling engine is refitted in place.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    overlap = { engines = "rolling",
                granularity = "layer" },
}
