-- localhost has no NIC, so it cannot have two nodes.
return {
    model = "../good/tiny.lua",
    cluster = { system = "localhost",
                nodes = 2 },
    train = { gpus = 4 },
    infer = { gpus = 4, first_gpu = 4 },
}
