-- An oversubscription below 1 would make leaf uplinks faster than the downlinks.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
                fabric = {
                    oversubscription = 0.5,
                } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
