-- Tiny Llama's delta at 5% density as a bitmap, TP2 onto TP4 in 1 MB rounds: every box
-- carries a bit per element and its changed values (refit-exec replays it on 6 ranks).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, tp = 2 },
    infer = { gpus = 4, first_gpu = 2, tp = 4 },
    staging_mb = 1,
    strategy = "reshard",
    update = { kind = "delta", density = 0.05, encoding = "bitmap" },
}
