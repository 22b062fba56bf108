-- A typo for deepseek-v3: the error suggests it and lists the models.
return {
    cluster = { system = "dgx-h100", nodes = 4 },
    model = "deepseek-v4",
    train = { gpus = 16, tp = 2 },
    infer = { gpus = 16, tp = 4 },
}
