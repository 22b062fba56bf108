-- Published row 6 (doc/research/refit-costs.md Part 2): miles' NCCL broadcast path,
-- Qwen3-235B-A22B BF16, Megatron TP4 PP4 CP2 EP16 ETP1 "8 nodes" -> SGLang TP32 EP32 "8 nodes",
-- on "H100 8 GPU hosts with Infiniband connection" (DGX H100 here). Timed "between engine pause
-- call returns and continue_generation call". Steady refits: steps 3-12 averaged (miles docs/advanced/p2p-weight-transfer.md).
-- Source: lmsys.org/blog/2026-04-29-p2p-update, "Implementation Results" (lm-sys/lm-sys.github.io
-- blog/2026-04-22-p2p-update.md); the NCCL column, 10,753.6 ms (the RDMA P2P column is the p2p
-- strategy under the same profile: miles' P2P path).
-- Nodes: per side, as row 4 (r04-miles-qwen3-30b-a3b-h100.lua) says why. Training TP4 x PP4 x
-- CP2 is 32 GPUs and EP16 needs an even DP, so 64 GPUs (DP2, expert DP1) is the smallest
-- training side and fills the "8 nodes" exactly; inference is 8 other nodes, two TP32 EP32
-- engines of 4 nodes each. 16 nodes in all. The 94 layers split over PP4 as refit's default
-- (the remainder to the first and last stages); the blog does not give the split.
-- published: row=6 strategy=broadcast s=10.7536 source=LMSYS P2P blog, NCCL
-- published: row=6p strategy=p2p s=3.1620 source=LMSYS P2P blog, RDMA P2P
return {
    model = "qwen3-235b-a22b",
    cluster = { system = "dgx-h100", nodes = 16 },
    train = { gpus = 64, first_gpu = 0, tp = 4, pp = 4, cp = 2, ep = 16, etp = 1,
              dtype = "bf16" },
    infer = { gpus = 64, first_gpu = 64, tp = 32, ep = 32, dtype = "bf16" },
    -- The published runs used a 1 GiB bucket (miles examples/infra_features/p2p_weight_transfer
    -- run.py l.1016-1024; doc/research/p2p-paths.md §1.2), not the 512 MiB default.
    framework = { profile = "miles", broadcast = { bucket = { mib = 1024 } },
                  p2p = { bucket = { mib = 1024 } } },
    strategy = "broadcast",
}
