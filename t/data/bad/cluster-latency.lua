-- A latency of more than 10 s per switch.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
                fabric = { switch_latency_us = 1e12 } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
