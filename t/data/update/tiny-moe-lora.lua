-- Tiny Qwen3-MoE's LoRA adapters on every linear layer, the routed experts' stacked weights
-- included (A [8, 8, in] and B [8, out, 8] per expert weight), merged on the engine: from
-- TP2 EP2 onto TP2 engines without expert parallelism (vLLM's fused-MoE LoRA runs with
-- ep = 1 only); refit-exec replays it on 6 ranks.
return {
    model = "../exec/tiny-qwen3-moe.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, tp = 2, ep = 2 },
    infer = { gpus = 4, first_gpu = 2, tp = 2 },
    staging_mb = 1,
    strategy = "reshard",
    update = { kind = "lora", rank = 8, merge = true },
}
