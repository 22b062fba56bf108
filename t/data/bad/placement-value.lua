-- A placement refit does not know.
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 72 },
    train = { gpus = 128, pp = 8, ep = 16 },
    infer = { gpus = 128, first_gpu = 144, tp = 32,
              placement = "spread" },
}
