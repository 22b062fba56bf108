-- The recipe on DGX H100 alone (cluster.num_nodes = 64), FP8 weights.
return {
    sides = { nemo_rl = "../yaml/nemo-rl-dsv3.yaml" },
    cluster = "dgx-h100",
    infer = { dtype = "fp8" },
}
