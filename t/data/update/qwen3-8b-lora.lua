-- Qwen3-8B LoRA rank 64 on every linear layer (PEFT's and verl's all-linear), TP2 on both
-- sides: only the adapters move, the frozen base model counts in the memory fit.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    strategy = "reshard",
    update = { kind = "lora", rank = 64 },
}
