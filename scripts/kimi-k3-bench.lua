-- Kimi K3 (the ~2.8T extrapolation in models/kimi-k3.lua) at the scale refit is designed
-- for: Megatron TP8 PP16 EP64 on 2048 training GPUs, vLLM TP16 with expert parallelism
-- (EP16 = TP x DP) on 4096 inference GPUs, 6144 GPUs = 768 DGX H100 nodes.
-- The planner's stress test (scripts/bench: 256 engines of 16 GPUs, the most transfers of
-- any shipped input), not a layout to serve: each inference GPU would hold 348 GB of
-- weights, so it is planned as a what-if. For a layout that fits see kimi-k3-h100-ep64.lua
-- (engines of 64 GPUs, TP8 x DP8, EP64) and `refit search`.
return {
    allow_overcommit = true,
    model = "kimi-k3",
    cluster = { system = "dgx-h100", nodes = 768 },
    train = { gpus = 2048, first_gpu = 0, tp = 8, pp = 16, ep = 64 },
    infer = { gpus = 4096, first_gpu = 2048, tp = 16, ep = 16 },
    strategy = "reshard",
}
