-- A scenario naming a cluster file by a path relative to the scenario.
return {
    model = "qwen3-8b",
    cluster = { system = "cluster-custom.lua", nodes = 4, calibration = { streams = 4 } },
    train = { gpus = 8, tp = 4 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
}
