-- tiny Llama refit through miles' P2P path (models/frameworks/miles.lua, strategy p2p):
-- 4 senders a training stage (TP2 DP2 PP2 on 8 GPUs), engines of 8 GPUs, so each sender loads
-- a CPU replica for 2 distinct target ranks and waits for the first one's writes.
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2, pp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 8 },
    framework = "miles",
    strategy = "p2p",
}
