-- Published row 13f (doc/research/refit-costs.md Part 2): NeMo RL nccl_reshard refit (the hybrid:
-- FFN projections shard to shard, the rest by packed broadcast), Qwen3-30B-A3B, Megatron -> vLLM
-- "EP4xTP2xDP2 -> TP4xEP4xDP4", DGX-H100, "Refit time" 1.00 s-1.60 s (a range over steps; the
-- midpoint is the figure, and the range is checked too).
-- Source: NVIDIA-NeMo/RL PR #2971 (2026-06-27), description table "DGX-H100 -
-- xferdtensor_python_impl (fallback path)". The bulk was moved by NeMo RL's pure-Python
-- fallback (batched point-to-point plus split-communicator broadcasts to replicas,
-- docs/design-docs/nccl-reshard-refit.md), not by nccl.m2n; the profile plans the bulk as M2N.
-- GPUs: the mapping names the parallel sizes, not the counts. Every generation mapping of the
-- table is 16 GPUs (TP4xDP4, TP2xDP8, TP8xDP2) and NeMo RL's non-colocated tests split the GPUs
-- 1:1 (PR #3334), so training has 16 GPUs too: 2 + 2 DGX H100 nodes. The training mapping's
-- TP, CP, PP and EP are Megatron's; its data parallel size follows from 16 GPUs (EP is carved
-- out of it: "EP8xPP2" is DP8 with EP8), ETP is 1 (nccl_reshard requires it).
-- "EP4xTP2xDP2" on 16 GPUs is TP2, DP8, EP4 and so expert DP4: its "DP2" matches no Megatron
-- size with ETP1 (it would be the expert DP with ETP = TP = 2); the 16 GPUs decide.
-- "30b (gen EP)": vLLM expert parallelism inside each TP4 engine (EP = TP, NeMo RL's convention).
-- published: row=13f strategy=hybrid s=1.300 lo=1.00 hi=1.60 source=NeMo RL PR #2971, fallback
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 2, ep = 4, etp = 1, dtype = "bf16" },
    infer = { gpus = 16, first_gpu = 16, tp = 4, ep = 4, dtype = "bf16" },
    framework = "nemo-rl",
    strategy = "hybrid",
}
