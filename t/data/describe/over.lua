-- plain.lua with two more overrides of the preset: leaf uplinks oversubscribed 2:1 and NCCL's
-- PXN off, so cross-rail messages climb to the spine too. Both move the prediction.
return {
    model = "../exec/tiny-llama.lua",
    cluster = {
        system = "dgx-h100",
        nodes = 2,
        fabric = { nodes_per_leaf = 1, oversubscription = 2, pxn = false },
    },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    staging_mb = 1,
    strategy = "reshard",
}
