-- A small MoE through Perplexity's schedule (models/frameworks/perplexity.lua): FSDP trainers
-- write into the engines' weights, the dense tensors first, then the experts.
return {
    model = "../exec/tiny-qwen3-moe.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, fsdp = true },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    framework = "perplexity",
    strategy = "p2p",
}
