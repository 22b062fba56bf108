-- Published row 8 (doc/research/refit-costs.md Part 2): miles' NCCL broadcast path, Kimi-K2,
-- BF16 Megatron TP8 PP8 CP4 EP32 ETP1 "32 nodes" -> SGLang TP32 EP32 FP8 "32 nodes", on "H100
-- 8 GPU hosts with Infiniband connection" (DGX H100 here). Timed "between engine pause call
-- returns and continue_generation call". Steady refits: steps 3-12 averaged (miles docs/advanced/p2p-weight-transfer.md).
-- Source: lmsys.org/blog/2026-04-29-p2p-update, "Implementation Results" (lm-sys/lm-sys.github.io
-- blog/2026-04-22-p2p-update.md); the NCCL column, 53,279.1 ms, the headline "53 seconds -> 7.2
-- seconds" (the RDMA P2P column is the p2p
-- strategy under the same profile: miles' P2P path).
-- Nodes: training TP8 x PP8 x CP4 is 256 GPUs (DP1, expert DP1), which alone is the "32 nodes"
-- of its column, so the inference column's "32 nodes" are 32 other nodes: eight TP32 EP32
-- engines. 64 nodes in all.
-- FP8: the blog "adjusted Kimi K2 to use [64, 64] block-quant size in fp8"; refit's FP8 has
-- 128x128 block scales, a difference of ~0.1% of the wire bytes (one FP32 scale per 4,096
-- weights instead of per 16,384). miles quantises on the sender (the profile's quantize).
-- Layers: 61 over PP8 as refit's default split (the blog does not give it).
-- published: row=8 strategy=broadcast s=53.2791 source=LMSYS P2P blog, NCCL
-- published: row=8p strategy=p2p s=7.2273 source=LMSYS P2P blog, RDMA P2P
return {
    model = "kimi-k2",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, first_gpu = 0, tp = 8, pp = 8, cp = 4, ep = 32, etp = 1,
              dtype = "bf16" },
    infer = { gpus = 256, first_gpu = 256, tp = 32, ep = 32, dtype = "fp8" },
    -- The published runs used a 1 GiB bucket (miles examples/infra_features/p2p_weight_transfer
    -- run.py l.1016-1024; doc/research/p2p-paths.md §1.2), not the 512 MiB default.
    framework = { profile = "miles", broadcast = { bucket = { mib = 1024 } },
                  p2p = { bucket = { mib = 1024 } } },
    strategy = "broadcast",
}
