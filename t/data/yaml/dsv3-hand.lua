-- What dsv3-nemo-rl.lua reads from nemo-rl-dsv3.yaml, written by hand (scripts/dsv3-h100.lua
-- with NeMo RL's profile, the recipe's gpu_memory_utilization and Ray's packed placement).
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, first_gpu = 0, tp = 1, pp = 16, ep = 16, etp = 1, cp = 1,
              pp_first = 3, pp_last = 2 },
    infer = { gpus = 256, first_gpu = 256, tp = 32, gpu_memory_utilization = 0.8,
              placement = "packed" },
    strategy = "broadcast",
    framework = "nemo-rl",
}
