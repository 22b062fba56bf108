-- Tiny DeepSeek-V3: Megatron PP2 EP2 (DP2) on GPUs 0-3 to vLLM TP2 with expert
-- parallelism, 2 replicas, on GPUs 4-7 (disjoint). 8 ranks.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 4, pp = 2, ep = 2 },
    infer = { gpus = 4, first_gpu = 4, tp = 2, ep = 2 },
    staging_mb = 1,
    strategy = "reshard",
}
