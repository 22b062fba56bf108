-- dp is 256 / 16 = 16, not 8.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, pp = 16, ep = 16,
              dp = 8 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
}
