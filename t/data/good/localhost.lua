-- A tiny model on this machine's MPI ranks: the localhost preset is one node already.
return {
    model = "tiny.lua",
    cluster = { system = "localhost" },
    train = { gpus = 4, tp = 2, pp = 2 },
    infer = { gpus = 4, first_gpu = 4, tp = 2 },
    strategy = "reshard",
}
