-- verl's DeepSeek-V3 split: PP16 with 4 layers on the first stage and 1 on the last.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, pp = 16, ep = 16, pp_first = 4, pp_last = 1 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
}
