-- Tiny Llama between two DGX H100 nodes, no framework profile: the plan refit would run
-- itself (t/framework.sh compares its stored description with nemo-rl.lua's).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    strategy = "broadcast",
}
