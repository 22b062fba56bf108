-- Tiny DeepSeek-V3: Megatron TP2 PP2 EP2 and vLLM TP4 in FP8 on the same 4 GPUs
-- (colocated): same-GPU pieces are local copies, FP8 weights travel with their scales.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 4, tp = 2, pp = 2, ep = 2 },
    infer = { gpus = 4, tp = 4, dtype = "fp8" },
    strategy = "hybrid",
}
