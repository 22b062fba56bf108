-- plain.lua run the way NeMo RL runs it (models/frameworks/nemo-rl.lua).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    strategy = "broadcast",
    framework = "nemo-rl",
}
