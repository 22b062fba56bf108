-- An override giving both bucket forms: the error names the nested field.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = {
        profile = "nemo-rl",
        broadcast = {
            bucket = { hbm_fraction = 0.05, mib = 1024 },
        },
    },
}
