-- relay-tree's cluster with the default ring: each box goes down a chain of 6 leaders, in
-- chunks of 4 KiB, so its pieces fill the chain step by step (a 512 KiB embedding shard
-- is 128 pieces, 6 steps apart from one end of the chain to the other). 8 ranks.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 8, gpus_per_node = 1, nvlink = { domain_gpus = 1 },
                nic = { per_node = 1 } },
    train = { gpus = 1 },
    infer = { gpus = 7, first_gpu = 1, tp = 1, dp = 7 },
    staging_mb = 1,
    chunk_kib = 4,
    strategy = "hierarchical",
}
