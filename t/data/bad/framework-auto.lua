-- auto is refit's own search, not a strategy a framework runs.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = { profile = "slime", strategies = { "auto" } },
}
