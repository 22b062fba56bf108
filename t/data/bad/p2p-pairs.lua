-- NeMo RL's NIXL path pairs policy rank i with rollout rank i: fewer trainers than engine GPUs
-- leave rollout ranks without a source.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 3 },
    train = { gpus = 8 },
    infer = { gpus = 16, first_gpu = 8 },
    framework = "nemo-rl",
    strategy = "p2p",
}
