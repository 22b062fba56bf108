-- Engines placed NVLink domain by domain (infer.placement = "domain", the default): on
-- localhost made into 2 domains of 6 GPUs, engines of 4 (vLLM TP2 DP2 EP4) leave 2 GPUs of
-- each domain idle: engine 0 on GPUs 0-3, engine 1 on 6-9 (packed, it would take 4-7 and
-- span both domains). Megatron TP2 EP2 trains on GPUs 4-5, the idle pair of domain 0, so a
-- broadcast's root lies inside the inference side's span without holding a shard of it.
-- 10 ranks: GPUs 10-11 are beyond the span.
return {
    model = "tiny-qwen3-moe.lua",
    cluster = { system = "localhost", nodes = 2, gpus_per_node = 6,
                nvlink = { domain_gpus = 6 },
                nic = { per_node = 1, gbps = 2.5, latency_us = 1 } },
    train = { gpus = 2, first_gpu = 4, tp = 2, ep = 2 },
    infer = { gpus = 8, first_gpu = 0, tp = 2, dp = 2, ep = 4 },
    staging_mb = 1,
    strategy = "hybrid",
}
