-- DeepSeek-V3 on DGX H100 with its sides read from a NeMo RL recipe (the model, the layouts,
-- the node count and the nemo-rl profile all come from the YAML file).
return {
    cluster = "dgx-h100",
    sides = { nemo_rl = "nemo-rl-dsv3.yaml" },
    strategy = "broadcast",
}
