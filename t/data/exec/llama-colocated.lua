-- Tiny Llama trained and served on the same single GPU (colocated): every piece is a
-- same-GPU copy. The NCCL backend's smallest real run (one GPU, one rank).
return {
    model = "tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 1 },
    infer = { gpus = 1 },
    staging_mb = 1,
    strategy = "reshard",
}
