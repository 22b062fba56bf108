-- The model file (relative to this scenario) has an unknown key.
return {
    model = "model-unknown-key.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 8 },
    infer = { gpus = 8 },
}
