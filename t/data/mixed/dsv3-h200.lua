-- The same engines on H200 (126.9 GB of 141 for vLLM) beside the H100 trainer: it fits.
return {
    model = "deepseek-v3",
    cluster = { train = "dgx-h100", infer = "dgx-h200" },
    train = { gpus = 256, tp = 1, pp = 16, ep = 16 },
    infer = { gpus = 64, tp = 8, dtype = "fp8" },
}
