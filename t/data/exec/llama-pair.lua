-- Tiny Llama from one training GPU to one inference GPU: the smallest world (2 ranks).
return {
    model = "tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 1,
    strategy = "reshard",
}
