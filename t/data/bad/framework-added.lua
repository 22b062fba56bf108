-- A reshard section added to verl, without its required stage_groups.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = {
        profile = "verl",
        strategies = { "hybrid" },
        reshard = { plan = "reshard", calls = 1 },
    },
}
