-- Qwen3-30B-A3B on DGX H100 with its sides read from a verl config (colocated: no profile).
return {
    cluster = "dgx-h100",
    sides = { verl = "verl-qwen3-30b.yaml" },
    strategy = "reshard",
}
