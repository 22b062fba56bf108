-- A profile path that does not exist, read from this file's directory.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = "no-such-profile.lua",
}
