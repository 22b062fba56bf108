-- 6 GPUs per node against the preset's 8-GPU NVLink domain: the override is at fault.
return {
    model = "qwen3-8b",
    cluster = {
        system = "dgx-h100",
        nodes = 4,
        gpus_per_node = 6,
    },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
