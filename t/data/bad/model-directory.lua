-- The model path names a directory.
return {
    model = "../hf",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 4, pp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
}
