-- 64-GPU engines, one per GB200 rack: 4 of them span 3 x 72 + 64 = 280 GPUs (24 idle), more
-- than 65 trays hold (260 GPUs), though their 256 GPUs alone would fit.
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 65 },
    train = { gpus = 32, pp = 4, ep = 8 },
    infer = { gpus = 256, tp = 8, dp = 8, ep = 64 },
}
