-- strategy p2p is a framework's point-to-point path: without a profile there is none.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    strategy = "p2p",
}
