-- nemo-rl.lua with an FP8 engine: NeMo RL broadcasts BF16 and every generator quantises
-- the whole tensors it receives (models/frameworks/nemo-rl.lua, broadcast.quantize).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4, dtype = "fp8" },
    strategy = "broadcast",
    framework = "nemo-rl",
}
