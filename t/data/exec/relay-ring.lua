-- Tiny DeepSeek-V3 from Megatron EP2 on GPUs 0-1 to six vLLM TP1 replicas on GPUs 2-7, on
-- nodes of 2 GPUs that are each an NVLink domain: hierarchical's leaders relay each box
-- around the ring of the 3 destination domains (the default relay, M2N's), and each
-- leader fans it out over NVLink, so a chain is up to 3 forwards long, all pipelined in
-- the round of its feed. 8 ranks.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 4, gpus_per_node = 2, nvlink = { domain_gpus = 2 },
                nic = { per_node = 2 } },
    train = { gpus = 2, ep = 2 },
    infer = { gpus = 6, first_gpu = 2, tp = 1, dp = 6 },
    staging_mb = 1,
    strategy = "hierarchical",
}
