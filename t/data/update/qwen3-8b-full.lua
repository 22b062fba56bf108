-- The same sides moving the full weights (qwen3-8b-lora.lua's baseline).
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    strategy = "reshard",
}
