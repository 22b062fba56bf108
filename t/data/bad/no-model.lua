-- No models/no-such-model.lua.
return {
    cluster = { system = "dgx-h100", nodes = 1 },
    model = "no-such-model",
    train = { gpus = 8 },
    infer = { gpus = 8 },
}
