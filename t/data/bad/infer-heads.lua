-- 32 attention heads do not split over inference TP 3 (vLLM refuses it).
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 6, first_gpu = 8,
              tp = 3 },
}
