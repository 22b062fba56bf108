-- A bucket fraction that rounds to nothing: 1e-11 of 80 GB is under one byte.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = {
        profile = "nemo-rl",
        broadcast = { bucket = { hbm_fraction = 1e-11, max_mib = 5120 } },
    },
}
