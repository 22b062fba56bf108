-- Tiny Llama's LoRA adapters (rank 16 on q_proj, o_proj and down_proj, merged on the engine)
-- from TP2 onto TP4 in 1 MB rounds: replicated A of a column layer and B of a row layer
-- reach every TP rank whole, the others their shard (refit-exec replays it on 6 ranks).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, tp = 2 },
    infer = { gpus = 4, first_gpu = 2, tp = 4 },
    staging_mb = 1,
    strategy = "reshard",
    update = { kind = "lora", rank = 16, targets = { "q_proj", "o_proj", "down_proj" },
               merge = true },
}
