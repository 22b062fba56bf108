-- Two engines per NVLink domain: on localhost made into 2 domains of 5 GPUs, engines of 2
-- (vLLM TP2 EP2) go 2 per domain (GPUs 0-1, 2-3 and 5-6, 7-8), GPU 4 idle between them, so
-- the engine mesh has its fifth axis (slot); packed, the third engine would take 4-5 across
-- both domains. Megatron TP1 trains on the idle GPU 4. 9 ranks.
return {
    model = "tiny-qwen3-moe.lua",
    cluster = { system = "localhost", nodes = 2, gpus_per_node = 5,
                nvlink = { domain_gpus = 5 },
                nic = { per_node = 1, gbps = 2.5, latency_us = 1 } },
    train = { gpus = 1, first_gpu = 4 },
    infer = { gpus = 8, first_gpu = 0, tp = 2, ep = 2 },
    staging_mb = 1,
    strategy = "hybrid",
}
