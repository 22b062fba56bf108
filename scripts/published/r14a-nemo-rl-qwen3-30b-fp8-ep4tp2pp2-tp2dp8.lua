-- Published row 14a (doc/research/refit-costs.md Part 2): NeMo RL nccl_reshard refit (the hybrid:
-- FFN projections shard to shard, the rest by packed broadcast), Qwen3-30B-A3B, Megatron -> vLLM
-- "EP4xTP2xPP2 -> TP2xDP8, FP8 rollout", DGX-H100, "Refit time" 3.19 s-4.04 s (a range over steps;
-- the midpoint is the figure, and the range is checked too).
-- Source: NVIDIA-NeMo/RL PR #2971 (2026-06-27), description table "DGX-H100 -
-- xferdtensor_python_impl (fallback path)". The bulk was moved by NeMo RL's pure-Python
-- fallback (batched point-to-point plus split-communicator broadcasts to replicas,
-- docs/design-docs/nccl-reshard-refit.md), not by nccl.m2n; the profile plans the bulk as M2N.
-- GPUs: the mapping names the parallel sizes, not the counts. Every generation mapping of the
-- table is 16 GPUs (TP4xDP4, TP2xDP8, TP8xDP2) and NeMo RL's non-colocated tests split the GPUs
-- 1:1 (PR #3334), so training has 16 GPUs too: 2 + 2 DGX H100 nodes. The training mapping's
-- TP, CP, PP and EP are Megatron's; its data parallel size follows from 16 GPUs (EP is carved
-- out of it: "EP8xPP2" is DP8 with EP8), ETP is 1 (nccl_reshard requires it).
-- FP8 rollout ("30b (FP8)", 93.0% of the bytes by the bulk path against 95.0% in BF16): the PR
-- does not say whether training kept BF16 parameters (BF16 -> FP8, quantised by the receiver)
-- or ran blockwise FP8 parameters (FP8 on the wire; nccl_reshard requires one of these to
-- match end to end on H100). refit trains in BF16 only, so it sends BF16 shards and quantises
-- them on the generator.
-- published: row=14a strategy=hybrid s=3.615 lo=3.19 hi=4.04 source=NeMo RL PR #2971, fallback
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 2, pp = 2, ep = 4, etp = 1, dtype = "bf16" },
    infer = { gpus = 16, first_gpu = 16, tp = 2, dtype = "fp8" },
    framework = "nemo-rl",
    strategy = "hybrid",
}
