-- 3 NICs cannot serve 8 GPUs evenly.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2,
        nic = { per_node = 3 } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
