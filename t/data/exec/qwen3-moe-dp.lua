-- Tiny Qwen3-MoE: Megatron TP2 EP4 (DP4, expert DP2) to one vLLM engine of TP4 DP2 EP8 (attention data
-- parallel, experts over its 8 ranks), colocated on 8 GPUs, 1 MB of staging.
return {
    model = "tiny-qwen3-moe.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 8, tp = 2, ep = 4 },
    infer = { gpus = 8, tp = 4, dp = 2, ep = 8 },
    staging_mb = 1,
    strategy = "hybrid",
}
