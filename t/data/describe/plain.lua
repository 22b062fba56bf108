-- Tiny Llama between two DGX H100 nodes on two rail leaves (nodes_per_leaf = 1): traffic
-- between the nodes climbs to the spine, so the fabric's figures matter (t/show.sh,
-- t/describe.sh compare it with over.lua).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2, fabric = { nodes_per_leaf = 1 } },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    staging_mb = 1,
    strategy = "reshard",
}
