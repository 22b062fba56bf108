-- What qwen3-verl.lua reads from verl-qwen3-30b.yaml, written by hand (Ray's packed placement).
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 16, tp = 2, pp = 2, ep = 4, etp = 1 },
    infer = { gpus = 16, tp = 4, gpu_memory_utilization = 0.6, placement = "packed" },
    strategy = "reshard",
}
