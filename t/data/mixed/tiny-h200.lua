-- An H100 trainer refitting H200 engines: the scaled-down Llama on one DGX H100 node (TP2
-- PP2) and one DGX H200 node (two TP4 engines, FP8), staged 1 MB at a time so that tensors go
-- in pieces. The infer part's nodes follow the trainer's, its nodes are what the side needs.
return {
    model = "../exec/tiny-llama.lua",
    cluster = { train = "dgx-h100", infer = "dgx-h200" },
    train = { gpus = 8, tp = 2, pp = 2 },
    infer = { gpus = 8, tp = 4, dtype = "fp8" },
    staging_mb = 1,
}
