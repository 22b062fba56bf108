-- NaN is no latency.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
                calibration = {
                    message_latency_us = 0 / 0,
                } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
