-- Names pattern-profile.lua, whose line 2 never ends without the budget.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = "pattern-profile.lua",
}
