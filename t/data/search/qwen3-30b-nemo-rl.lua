-- The step-ranked search test (t/search-step.sh): t/data/search/qwen3-30b.lua's model and
-- training side run the way NeMo RL runs them (models/frameworks/nemo-rl.lua): broadcast,
-- each tensor gathered over TP and PP on the trainers before it goes on the wire.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 2, pp = 2, ep = 4 },
    infer = { gpus = 16, first_gpu = 16, tp = 2, gpu_memory_utilization = 0.2125 },
    strategy = "broadcast",
    framework = "nemo-rl",
    staging_mb = 512,
}
