-- NVFP4 engines under a framework profile, whose conversions are FP8's.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2, dtype = "nvfp4" },
    framework = "nemo-rl",
}
