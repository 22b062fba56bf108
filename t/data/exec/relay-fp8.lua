-- relay-ring's cluster and training side, onto three vLLM TP2 replicas in FP8 (one per
-- destination NVLink domain): the ring relays FP8 boxes and their scales. 8 ranks.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 4, gpus_per_node = 2, nvlink = { domain_gpus = 2 },
                nic = { per_node = 2 } },
    train = { gpus = 2, ep = 2 },
    infer = { gpus = 6, first_gpu = 2, tp = 2, dp = 3, dtype = "fp8" },
    staging_mb = 1,
    strategy = "hierarchical",
}
