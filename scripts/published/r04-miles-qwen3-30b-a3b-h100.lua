-- Published row 4 (doc/research/refit-costs.md Part 2): miles' NCCL broadcast path,
-- Qwen3-30B-A3B BF16, Megatron TP4 PP1 CP1 EP8 ETP1 "2 nodes" -> SGLang TP8 EP8 "2 nodes", on
-- "H100 8 GPU hosts with Infiniband connection" (DGX H100 here). Timed "between engine pause
-- call returns and continue_generation call" (so post_process_weights and the version bump are
-- inside). Steady refits: steps 3-12 averaged (miles docs/advanced/p2p-weight-transfer.md).
-- Source: lmsys.org/blog/2026-04-29-p2p-update, "Implementation Results" (lm-sys/lm-sys.github.io
-- blog/2026-04-22-p2p-update.md); the NCCL column, 2,670.0 ms (the RDMA P2P column is the p2p
-- strategy under the same profile: miles' P2P path).
-- Nodes: the table gives a node count in each config column, and the blog's other rows only
-- make sense read per side: Kimi-K2's training layout (TP8 x PP8 x CP4 = 256 GPUs) alone fills
-- its "32 nodes". So "2 nodes" is 2 nodes of training (16 GPUs: DP4, expert DP2) and 2 other
-- nodes of inference (two TP8 EP8 engines), 4 nodes in all, not shared.
-- published: row=4 strategy=broadcast s=2.6700 source=LMSYS P2P blog, NCCL
-- published: row=4p strategy=p2p s=2.1602 source=LMSYS P2P blog, RDMA P2P
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, first_gpu = 0, tp = 4, pp = 1, cp = 1, ep = 8, etp = 1,
              dtype = "bf16" },
    infer = { gpus = 16, first_gpu = 16, tp = 8, ep = 8, dtype = "bf16" },
    -- The published runs used a 1 GiB bucket (miles examples/infra_features/p2p_weight_transfer
    -- run.py l.1016-1024; doc/research/p2p-paths.md §1.2), not the 512 MiB default.
    framework = { profile = "miles", broadcast = { bucket = { mib = 1024 } },
                  p2p = { bucket = { mib = 1024 } } },
    strategy = "broadcast",
}
