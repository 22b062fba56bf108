-- NeMo RL colocated (models/frameworks/nemo-rl.lua, colocated): Megatron TP2 (DP8) and vLLM
-- TP2 (8 engines) on the same 16 GPUs of two DGX H100 nodes, so every GPU's inference shard
-- is its own training shard: the plan moves no byte between GPUs (t/colocated.sh).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 16, tp = 2 },
    infer = { gpus = 16, first_gpu = 0, tp = 2 },
    framework = "nemo-rl",
}
