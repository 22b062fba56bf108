-- Six TP16 engines: 4 fill a 72-GPU rack, the other 2 would leave it part full.
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 72 },
    train = { gpus = 64, pp = 4, ep = 16 },
    infer = {
        gpus = 96,
        first_gpu = 72,
        tp = 16,
    },
}
