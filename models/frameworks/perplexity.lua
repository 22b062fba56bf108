-- Perplexity's static RDMA schedule (research.perplexity.ai, "Weight Transfer for RL
-- Post-Training in under 2 seconds", 2025-09-24; le.qun.ch 2025-09-17 "Pipeline
-- Optimization"; second hand: ai-dynamo/modelexpress @ 6f6f1b4d docs/optimization-comparison.md;
-- doc/research/p2p-paths.md §4). FSDP trainers; a controller computes once which training GPU
-- sends which parameter to which inference GPU; per refit each trainer runs its share as
-- tasks through four overlapped stages (H2D when offloaded, GPU ops: full_tensor(),
-- projection fusion, FP8 quantisation; RDMA WRITE into the inference GPU's weights; a
-- global barrier), one mesh group after another (non-MoE, then MoE). Strategy p2p, planned
-- as reshard: every inference shard from one source, which refit picks balanced by load as
-- the schedule balances bytes. Not modelled: the H2D stage (refit's FSDP trainers keep their
-- weights on the GPU), the Gloo barrier after each group's last full_tensor() (over
-- Ethernet, no published cost: 0), the watermark's effect on how many tasks overlap.
-- The posts are web pages, not a repository: every field cites ModelExpress's restatement
-- of them at a commit (the house's form of a citation), and says which post it restates.
local MX, MX_AT = "ai-dynamo/modelexpress", "6f6f1b4d"
local DOC = "docs/optimization-comparison.md"

return framework.profile{
    name = "perplexity",
    strategies = { "p2p" },
    p2p = {
        plan = "reshard",
        -- full_tensor() per parameter over its DeviceMesh (the FSDP all-gather).
        gather = "fsdp",
        select = "shard",
        -- RDMA WRITE from the trainer's GPU into the inference GPU's weights; "The
        -- destination side won't even get notified".
        from = "gpu",
        verb = "write",
        into = "weights",
        -- Mesh groups in order: the non-MoE group, then the MoE group.
        experts_after = true,
        -- Tasks start while temporary GPU bytes stay under a configurable watermark (MX §7);
        -- its size is not published: refit takes 1 GiB (a scenario may set its own).
        bucket = { mib = 1024 },
        -- Four overlapped stages handing off through CUDA-event polls.
        buffers = 2,
        -- Projection fusion and FP8 quantisation on the GPU that sends, of what it sends.
        quantize = "sender",
        export_calls = 1,
        load_calls = 0,
        -- The inference side registers its caching allocator's blocks once, at start.
        register = "none",
    },
    finalize_s = 0, -- no engine call after the writes
    sources = {
        { field = "strategies", repo = MX, commit = MX_AT, file = DOC,
          func = "Perplexity (research.perplexity.ai 2025-09-24, High-level workflow)",
          says = "a controller computes a static schedule: which "
              .. "training GPU sends which parameter to which inference GPU, in what order" },
        { field = "p2p", repo = MX, commit = MX_AT, file = DOC,
          func = "Perplexity (research.perplexity.ai 2025-09-24, RDMA WRITE)",
          says = "one-sided RDMA WRITE from training GPUs into the inference GPUs' weights" },
        { field = "p2p.gather", repo = MX, commit = MX_AT, file = DOC,
          func = "Perplexity (le.qun.ch 2025-09-17, Pipeline Optimization)",
          says = "stage 2, GPU ops: full_tensor(), projection "
              .. "fusion, quantisation" },
        { field = "p2p.buffers", repo = MX, commit = MX_AT, file = DOC,
          func = "Perplexity (le.qun.ch 2025-09-17, Pipeline Optimization)",
          says = "four overlapped stages (H2D, GPU ops, RDMA, "
              .. "barrier) handing off through non-blocking CUDA-event polls" },
        { field = "p2p.experts_after", repo = MX, commit = MX_AT, file = DOC,
          func = "Perplexity (le.qun.ch 2025-09-17, PyTorch Profiler)",
          says = "two mesh groups for Kimi-K2, non-MoE then MoE, a "
              .. "Gloo barrier after each group's last full_tensor() with async_op=True" },
        { field = "p2p.bucket", repo = MX, commit = MX_AT, file = DOC,
          func = "§7 watermark", says = "a task starts only while temporary GPU memory stays "
              .. "under a configurable watermark (size not given)" },
        { field = "p2p.register", repo = MX, commit = MX_AT,
          file = DOC, func = "§4 registration",
          says = "the inference side registers caching-allocator blocks, not tensors, once" },
    },
}
