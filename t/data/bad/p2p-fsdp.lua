-- Perplexity's schedule gathers with FSDP's full_tensor(): a Megatron side cannot run it.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = "perplexity",
    strategy = "p2p",
}
