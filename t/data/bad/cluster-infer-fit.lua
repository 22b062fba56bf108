-- Inference GPUs 256..511 on 48 nodes of 8 (384 GPUs).
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 48 },
    train = { gpus = 256, pp = 16, ep = 16 },
    infer = {
        gpus = 256,
        first_gpu = 256,
        tp = 32,
    },
}
