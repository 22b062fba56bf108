-- 64 GPUs of TP8 are 8 replicas.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 16 },
    train = { gpus = 64 },
    infer = { gpus = 64, first_gpu = 64, tp = 8, replicas = 4 },
}
