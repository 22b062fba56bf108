-- Bytes written into the engine's live weights need no loader on the receiver.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, fsdp = true },
    infer = { gpus = 8, first_gpu = 8 },
    framework = { profile = "perplexity",
                  p2p = { load_calls = 1 } },
    strategy = "p2p",
}
