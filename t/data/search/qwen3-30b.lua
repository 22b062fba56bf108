-- The layout search test (t/search.sh): Qwen3-30B-A3B from 16 training GPUs (TP2 PP2 EP4) on
-- four DGX H100 nodes. The inference engines get 21.25% of each 80 GB GPU (17 GB), so that
-- memory cuts through the 4-GPU layouts: TP4 fits, TP2 x DP2 with EP4 misses by 73 MB.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 2, pp = 2, ep = 4 },
    infer = { gpus = 16, first_gpu = 16, tp = 2, gpu_memory_utilization = 0.2125 },
    strategy = "reshard",
    staging_mb = 512,
}
