-- A bare value where name = value is expected.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 8,
        8 },
    infer = { gpus = 8 },
}
