-- Tiny Llama onto NVFP4 engines, TP2 onto TP4 in 1 MB rounds: each quantised weight travels
-- as packed pairs of 4-bit values with an FP8 scale per 16 along its last dim (refit-exec
-- replays it on 6 ranks).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, tp = 2 },
    infer = { gpus = 4, first_gpu = 2, tp = 4, dtype = "nvfp4" },
    staging_mb = 1,
    strategy = "reshard",
}
