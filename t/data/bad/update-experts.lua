-- Adapters of the routed experts onto engines with expert parallelism, which vLLM's fused-MoE
-- LoRA does not run.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2, ep = 4 },
    infer = { gpus = 8, first_gpu = 8, tp = 2, dp = 4, ep = 8 },
    update = { kind = "lora", rank = 8, targets = { "all-linear" } },
}
