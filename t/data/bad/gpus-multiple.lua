-- 250 GPUs cannot hold whole tp*cp*pp = 16 groups.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { pp = 16, ep = 1,
        gpus = 250 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
}
