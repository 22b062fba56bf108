-- t/data/exec/llama-pair.lua predicted with NCCL's PXN off: refit-exec replays it with
-- NCCL_PXN_DISABLE=1 on every rank (t/describe.sh).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1, fabric = { pxn = false } },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 1,
    strategy = "reshard",
}
