-- A network channel of 1 byte/s: the derived channel count would be absurd.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
                calibration = { channel_gbps = 1e-9 } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
