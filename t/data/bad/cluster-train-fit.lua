-- 256 training GPUs on 16 nodes of 8.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 16 },
    train = { gpus = 256, pp = 16, ep = 16 },
    infer = { gpus = 128, tp = 32 },
}
