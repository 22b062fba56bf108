-- Kimi K3 (the ~2.8T extrapolation in models/kimi-k3.lua) at the scale refit is designed
-- for: Megatron TP8 PP16 EP64 on 2048 training GPUs, vLLM TP16 with expert parallelism
-- (EP16 = TP x DP) on 4096 inference GPUs, 6144 GPUs = 768 DGX H100 nodes.
-- A deliberate what-if: TP16 EP16 holds 348 GB of weights per 80 GB GPU. It is the planner's
-- benchmark (scripts/bench: 10.6 M transfers), not a layout to serve; `refit search` lists
-- the layouts that fit (README, Layout search).
return {
    model = "kimi-k3",
    cluster = { system = "dgx-h100", nodes = 768 },
    train = { gpus = 2048, first_gpu = 0, tp = 8, pp = 16, ep = 64 },
    infer = { gpus = 4096, first_gpu = 2048, tp = 16, ep = 16 },
    strategy = "reshard",
    allow_overcommit = true,
}
