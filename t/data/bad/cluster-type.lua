-- A rate is a number, not a string with a unit.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2, nvlink = { gbps = "450 GB/s" } },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
