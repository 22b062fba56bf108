-- Perplexity's static RDMA schedule (models/frameworks/perplexity.lua), Kimi-K2 1T: "256
-- training GPUs (BF16, FSDP) -> 128 inference GPUs (FP8)", "1.3-second cross-machine
-- parameter updates", the trace "a bit over 1.2 seconds" (research.perplexity.ai 2025-09-24;
-- le.qun.ch 2025-09-17; doc/research/p2p-paths.md §4.2). Not stated there, assumed here: the
-- GPUs (H100, DGX H100 nodes with 8 x 400 Gb/s NICs), the inference layout (8 engines of TP16
-- EP16), FSDP over all 256 trainers (Perplexity's dense mesh stays inside a node, which
-- refit's FSDP, one Shard(0) over the data-parallel group, cannot say). A what-if on a
-- partly stated setup, so scripts/bench-published does not count it. A 1T model's BF16
-- weights, gradients and Adam state on 256 GPUs need 87 GB a GPU: Perplexity's trainers keep
-- what does not fit on the host (its first stage is an H2D copy "when FSDP keeps weights on
-- the host"), which refit's memory check does not model, so the fit is waived here.
return {
    allow_overcommit = true,
    model = "kimi-k2",
    cluster = { system = "dgx-h100", nodes = 48 },
    train = { gpus = 256, first_gpu = 0, tp = 1, pp = 1, ep = 1, fsdp = true, dtype = "bf16" },
    infer = { gpus = 128, first_gpu = 256, tp = 16, ep = 16, dtype = "fp8" },
    framework = "perplexity",
    strategy = "p2p",
}
