-- A small MoE refit through NeMo RL's NIXL path (models/frameworks/nemo-rl.lua, strategy p2p):
-- policy rank i feeds rollout rank i; each vLLM rank (TP4, two engines) receives every dense
-- tensor whole and its TP slice of the experts, in buckets of 1 MiB it loads before the next.
return {
    model = "../exec/tiny-qwen3-moe.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2, ep = 4 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    framework = { profile = "nemo-rl", p2p = { bucket = { mib = 1 } } },
    strategy = "p2p",
}
