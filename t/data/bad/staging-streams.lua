-- 100 streams of the default 1.6 GB staging do not fit in an 80 GB H100.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
                calibration = { streams = 100 } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
