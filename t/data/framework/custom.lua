-- A scenario naming a profile file by path (my-profile.lua, beside it).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    strategy = "reshard",
    framework = "my-profile.lua",
}
