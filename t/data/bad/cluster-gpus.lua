-- 2^20 nodes of 8 GPUs: more GPUs than refit plans.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100",
                nodes = 1 << 20 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
