-- Megatron PP8 (uneven: 7, 8 x 6, 6) beside vLLM PP8 with DP attention and expert
-- parallelism, colocated on the same GPUs.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, pp = 8 },
    infer = { gpus = 512, tp = 8, pp = 8, dp = 4, ep = 32 },
}
