-- vLLM's expert parallelism spans tp*dp = 8 ranks, not 4.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, ep = 8 },
    infer = { gpus = 8, first_gpu = 8, tp = 8,
              ep = 4 },
}
