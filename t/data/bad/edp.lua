-- tp*cp*dp = 16 ranks cannot hold an ep*etp = 32 expert group.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, pp = 16,
              ep = 32 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
}
