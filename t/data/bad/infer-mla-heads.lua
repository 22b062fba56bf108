-- MLA: DeepSeek-V3's 128 heads do not split over TP 48.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 16 },
    train = { gpus = 64, pp = 4, ep = 16 },
    infer = { gpus = 48, first_gpu = 64,
              tp = 48 },
}
