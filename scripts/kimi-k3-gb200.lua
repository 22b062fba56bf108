-- Kimi K3 capacity planning on GB200 NVL72: the 2.8T extrapolation (models/kimi-k3.lua) from
-- 2048 training GPUs (Megatron TP8 PP16 EP64) to 4096 inference GPUs (vLLM TP16 with expert
-- parallelism EP16), 6144 GPUs = 1536 compute trays = about 85 NVL72 racks.
-- Compare with scripts/kimi-k3-bench.lua (the same layouts on DGX H100).
return {
    model = "kimi-k3",
    cluster = { system = "gb200-nvl72", nodes = 1548 },
    train = { gpus = 2048, first_gpu = 0, tp = 8, pp = 16, ep = 64 },
    infer = { gpus = 4096, first_gpu = 2088, tp = 16, ep = 16 },
    strategy = "auto",
}
