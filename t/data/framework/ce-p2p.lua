-- checkpoint-engine's two modes on one setup (models/frameworks/checkpoint-engine.lua): run
-- with --strategy broadcast (H2D copies on the owners) and --strategy p2p (remote reads).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    framework = "checkpoint-engine",
    strategy = "p2p",
}
