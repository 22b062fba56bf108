-- 64-GPU engines from GPU 36 of a GB200 rack: each would straddle two racks.
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 72 },
    train = { gpus = 32, pp = 4, ep = 8 },
    infer = {
        gpus = 128,
        first_gpu = 36,
        tp = 8, dp = 8, ep = 64,
    },
}
