-- A bandwidth past any hardware (it made the link capacity inf).
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
                nvlink = { gbps = 1e300 } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
