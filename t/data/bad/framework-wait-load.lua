-- wait_load with the preset's 2 buffers: a relation between fields.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = {
        profile = "nemo-rl",
        broadcast = { wait_load = true },
    },
}
