-- DeepSeek-V3 with FP8 TP8 engines on H100: 85 GB of weights a GPU do not fit in the 72 GB
-- vLLM's share (0.9) leaves of 80 GB; refused.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 40 },
    train = { gpus = 256, tp = 1, pp = 16, ep = 16 },
    infer = { gpus = 64, first_gpu = 256, tp = 8, dtype = "fp8" },
}
