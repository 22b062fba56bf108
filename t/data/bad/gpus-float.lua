-- 2^32 is a float in Lua: integral, but more GPUs than refit plans.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 2^32, first_gpu = 8 },
}
