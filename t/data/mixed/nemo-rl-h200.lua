-- NeMo RL's DeepSeek-V3 recipe (32 nodes of Megatron, 32 of vLLM TP32) with its generation
-- nodes on H200 and FP8 weights: the YAML's node split is the parts' boundary.
return {
    sides = { nemo_rl = "../yaml/nemo-rl-dsv3.yaml" },
    cluster = { train = "dgx-h100", infer = "dgx-h200" },
    infer = { dtype = "fp8" },
}
