-- Tiny DeepSeek-V3 from one training GPU to seven vLLM replicas, each GPU a node and an
-- NVLink domain of its own: hierarchical's leaders relay down a tree (fanout 2: each
-- leader forwards to two others) instead of a chain around the ring. 8 ranks.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 8, gpus_per_node = 1, nvlink = { domain_gpus = 1 },
                nic = { per_node = 1 } },
    train = { gpus = 1 },
    infer = { gpus = 7, first_gpu = 1, tp = 1, dp = 7 },
    staging_mb = 1,
    strategy = "hierarchical",
    relay = { fanout = 2 },
}
