-- An efficiency is a fraction of line rate.
return {
    model = "qwen3-8b",
    cluster = {
        system = "dgx-h100", nodes = 2,
        calibration = {
            memcpy_gbps = 1000,
            nic_efficiency = 1.5,
        },
    },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
