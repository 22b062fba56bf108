-- An overlapped refit under a framework profile, whose refit is its step.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    framework = "nemo-rl",
    overlap = { engines = "all" },
}
