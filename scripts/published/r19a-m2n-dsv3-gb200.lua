-- Published row 19 (doc/research/refit-costs.md Part 2; frameworks.md §6): the NCCL M2N
-- reshard benchmark (reshard_model_bench --validate --no-dedup), DeepSeek-V3 BF16, trainer
-- TP1 EP16 DP2 PP4 on 128 GPUs ("2 NVL") -> generator TP8 DP16 on 128 GPUs ("2 NVL"), GB200
-- NVL72, 4 GPUs a node. "Max latency" (the slowest rank's sum of its per-pattern timings, so no
-- overlap between patterns counted): 1447 ms hierarchical (ring, NODE_AWARE), 3838 ms direct
-- P2P (UNIFORM). Every parameter moves by reshard (no broadcast part).
-- Source: NVIDIA/nccl-extensions @ 44d2de0d nccl_m2n/README.md, "Reference Performance" (the
-- README says these predate its current compatibility aliases).
-- Strategies: hierarchical is M2N's hierarchical path; reshard (refit's direct plan) stands
-- for the direct P2P figure.
-- GPUs: TP1 x PP4 on 128 GPUs is Megatron DP32 = EP16 x expert DP2 ("EP16 DP2"). "2 NVL" a
-- side: 64 GPUs in each of two racks, so training takes GPUs 8-135 (racks 0 and 1, the first 8
-- of rack 0 idle; PP stages 0-1 in rack 0, 2-3 in rack 1) and the generator GPUs 152-279
-- (racks 2 and 3), TP8 engines packed (8 a rack; refit's rack-by-rack placement would put 9
-- in a rack). 4 racks, 72 trays. Layers over PP4 as refit's default split (the README does
-- not give it). The bench runs no engine: the generator's GPUs hold the weights (169.6 GB a
-- GPU at TP8) and the reshard's buffers, no KV cache, so its share of HBM is all of it
-- (gpu_memory_utilization = 1; vLLM's 0.9 would leave no room for DeepSeek-V3 at TP8).
-- published: row=19a strategy=hierarchical s=1.447 source=M2N README, hierarchical
-- published: row=19a' strategy=reshard s=3.838 source=M2N README, direct P2P
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 72 },
    train = { gpus = 128, first_gpu = 8, tp = 1, pp = 4, ep = 16, etp = 1, cp = 1,
              dtype = "bf16" },
    infer = { gpus = 128, first_gpu = 152, tp = 8, ep = 1, dtype = "bf16",
              placement = "packed", gpu_memory_utilization = 1 },
    framework = "m2n",
    strategy = "hierarchical",
}
