-- A LoRA target that names no module of the model (a typo of q_proj).
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    update = {
        kind = "lora",
        rank = 8,
        targets = { "v_proj", "q_prj" },
    },
}
