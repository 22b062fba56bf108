-- The recipe on DGX H200 alone, FP8 weights.
return {
    sides = { nemo_rl = "../yaml/nemo-rl-dsv3.yaml" },
    cluster = "dgx-h200",
    infer = { dtype = "fp8" },
}
