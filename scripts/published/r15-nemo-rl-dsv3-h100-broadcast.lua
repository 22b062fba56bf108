-- Published row 15 (doc/research/refit-costs.md Part 2; frameworks.md §2.4): NeMo RL's default
-- non-colocated refit (NCCL gather-and-broadcast, refit_transport unset), DeepSeek-V3 BF16,
-- 32 policy nodes Megatron TP1 PP16 EP16 -> 4 rollout nodes vLLM TP32 PP1 EP1 (one engine),
-- "36 eight-GPU nodes" of H100 with eight RDMA rails (DGX H100 here: 8 x 400 Gb/s NICs).
-- NCCL broadcast 14.21 s on the "dedicated async refit timer", 15.52 s on the "matched
-- synchronous verifier" (async vLLM, gpu_memory_utilization 0.82, Triton MoE). The same setup
-- under refit_transport: nixl (strategy p2p: NIXL reads, dense tensors whole, experts sharded,
-- a 4096 MiB bucket as the table states) took 9.25 s on the async timer, 10.92 s on the
-- verifier; "Each vLLM rank loaded 45,395 destination-local tensors in 18 batches, totaling
-- 69.95 GiB".
-- Source: NVIDIA-NeMo/RL docs/guides/checkpoint-engine-refit.md, "DeepSeek-V3 Benchmark".
-- Not stated for the NCCL run: its bucket (the 4096 MiB of the table is NIXL's); the profile's
-- default (0.02 x HBM) is used. Layers over PP16 as NeMo RL's recipes split them (3, 4 x 14, 2;
-- refit's default), MTP off.
-- published: row=15 strategy=broadcast s=14.21 source=NeMo RL NIXL doc, async timer
-- published: row=15' strategy=broadcast s=15.52 source=NeMo RL NIXL doc, sync verifier
-- published: row=15n strategy=p2p s=9.25 source=NeMo RL NIXL doc, NIXL async timer
-- published: row=15n' strategy=p2p s=10.92 source=NeMo RL NIXL doc, NIXL sync verifier
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 36 },
    train = { gpus = 256, first_gpu = 0, tp = 1, pp = 16, ep = 16, etp = 1, cp = 1,
              dtype = "bf16" },
    infer = { gpus = 32, first_gpu = 256, tp = 32, ep = 1, dtype = "bf16",
              gpu_memory_utilization = 0.82 },
    framework = { profile = "nemo-rl", p2p = { bucket = { mib = 4096 } } },
    strategy = "broadcast",
}
