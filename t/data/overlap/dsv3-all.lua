-- The same refit onto all 8 engines at once while they keep generating on the old weights,
-- which land a layer at a time beside them; generation itself moves 20 GB/s through each
-- inference GPU's NVLink and NIC ports.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, tp = 1, pp = 16, ep = 16 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
    strategy = "reshard",
    overlap = { engines = "all", granularity = "layer", generation_gbps = 20 },
}
