-- 61 - 3 - 3 = 55 layers do not split over 14 middle stages.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, pp = 16, ep = 16,
              pp_first = 3, pp_last = 3 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
}
