-- The step-ranked search test (t/search-step.sh): dense Qwen3-32B broadcast the way NeMo RL
-- runs it (models/frameworks/nemo-rl.lua), each tensor gathered over TP and PP on the trainers
-- before it goes on the wire. A dense model's tensors are large, so an engine GPU's load is
-- its shard's copy (the loader's host calls hide under it): the inference TP sets the load,
-- and the step's order differs from the wire's.
return {
    model = "qwen3-32b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 4, pp = 2 },
    infer = { gpus = 16, first_gpu = 16, tp = 2 },
    strategy = "broadcast",
    framework = "nemo-rl",
    staging_mb = 512,
}
