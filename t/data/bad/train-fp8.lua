-- FP8 on the training side: the executor cannot send it, and Megatron holds BF16.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8,
              dtype = "fp8" },
    infer = { gpus = 8, first_gpu = 8 },
}
