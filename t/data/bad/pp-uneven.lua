-- 36 layers over 20 stages: middle stages of 2 layers leave nothing for the last stage.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 5 },
    train = { gpus = 20,
              pp = 20 },
    infer = { gpus = 8, first_gpu = 20 },
}
