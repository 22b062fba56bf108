-- DeepSeek-V3 on two GB200 NVL72 racks (36 compute trays of 4 GPUs): training on the first
-- 64 GPUs, inference on 64 GPUs of the second rack.
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 36 },
    train = { gpus = 64, pp = 4, ep = 16 },
    infer = { gpus = 64, first_gpu = 72, tp = 8, ep = 8 },
}
