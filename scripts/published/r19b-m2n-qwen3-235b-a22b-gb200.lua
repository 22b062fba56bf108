-- Published row 19 (doc/research/refit-costs.md Part 2; frameworks.md §6): the NCCL M2N
-- reshard benchmark (reshard_model_bench --validate --no-dedup), Qwen3-235B-A22B BF16, trainer
-- TP2 CP2 EP16 PP4 on 64 GPUs ("1 NVL") -> generator TP8 DP8 on 64 GPUs ("1 NVL"), GB200
-- NVL72, 4 GPUs a node. "Max latency" (the slowest rank's sum of its per-pattern timings):
-- 989 ms hierarchical (ring, NODE_AWARE), 2175 ms direct P2P (UNIFORM). Every parameter moves
-- by reshard.
-- Source: NVIDIA/nccl-extensions @ 44d2de0d nccl_m2n/README.md, "Reference Performance".
-- Strategies: hierarchical is M2N's hierarchical path; reshard stands for direct P2P.
-- GPUs: TP2 x CP2 x PP4 on 64 GPUs is DP4, EP16 over TP x CP x DP (expert DP1). Training in
-- rack 0 (GPUs 0-63), the generator in rack 1 (GPUs 72-135, eight TP8 engines packed; refit's
-- rack-by-rack placement would want 9 a rack). 2 racks, 36 trays. Layers over PP4 as refit's
-- default split.
-- published: row=19b strategy=hierarchical s=0.989 source=M2N README, hierarchical
-- published: row=19b' strategy=reshard s=2.175 source=M2N README, direct P2P
return {
    model = "qwen3-235b-a22b",
    cluster = { system = "gb200-nvl72", nodes = 36 },
    train = { gpus = 64, first_gpu = 0, tp = 2, pp = 4, cp = 2, ep = 16, etp = 1,
              dtype = "bf16" },
    infer = { gpus = 64, first_gpu = 72, tp = 8, ep = 1, dtype = "bf16", placement = "packed" },
    framework = "m2n",
    strategy = "hierarchical",
}
