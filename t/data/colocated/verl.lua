-- verl's hybrid engine (models/frameworks/verl.lua, colocated): FSDP actor and vLLM rollout
-- (TP2, 4 engines) on the same 8 GPUs of one DGX H100 (t/colocated.sh).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 8, fsdp = true },
    infer = { gpus = 8, first_gpu = 0, tp = 2 },
    framework = "verl",
}
