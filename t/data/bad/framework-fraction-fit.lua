-- A profile's bucket whose buffers do not fit in the GPU: the bucket is blamed, not the
-- cluster's streams.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = {
        profile = "nemo-rl",
        broadcast = { bucket = { hbm_fraction = 0.9, max_mib = 1048576 } },
    },
}
