-- A small refit for the end-to-end simulator test: Qwen3-30B-A3B from 16 training GPUs
-- (TP2 PP2 EP4) to 16 inference GPUs (TP2, 8 replicas: 4 per 8-GPU NVLink domain) on four
-- DGX H100 nodes.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 2, pp = 2, ep = 4 },
    infer = { gpus = 16, first_gpu = 16, tp = 2 },
    strategy = "reshard",
    staging_mb = 512,
}
