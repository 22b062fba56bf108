-- Kimi K3 capacity planning on GB200 NVL72: the 2.8T extrapolation (models/kimi-k3.lua) from
-- 2048 training GPUs (Megatron TP8 PP16 EP64) to 4096 inference GPUs in 64 vLLM engines of
-- 64 GPUs (attention TP8 x DP8, experts EP64), one per NVL72 rack (infer.placement =
-- "domain", the default: an engine never spans two racks, the other 8 GPUs of each stay
-- idle). The layout this replaced did not fit: TP16 EP16 held 348 GB of weights per 186 GB GPU.
-- Training fills racks 0-28 (2048 of their 2088 GPUs), inference starts at rack 29 (GPU
-- 2088) and takes 64 racks: 93 racks, 6696 GPUs = 1674 compute trays.
-- Compare with scripts/kimi-k3-bench.lua (DGX H100).
return {
    model = "kimi-k3",
    cluster = { system = "gb200-nvl72", nodes = 1674 },
    train = { gpus = 2048, first_gpu = 0, tp = 8, pp = 16, ep = 64 },
    infer = { gpus = 4096, first_gpu = 2088, tp = 8, dp = 8, ep = 64, placement = "domain" },
    strategy = "auto",
}
