-- first_gpu + gpus - 1 would wrap past math.maxinteger.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8,
              first_gpu = math.maxinteger },
    infer = { gpus = 8, first_gpu = 8 },
}
