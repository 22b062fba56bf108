-- MoonshotAI checkpoint-engine, broadcast mode: weights sit in pinned host memory on their
-- owner; per bucket every owner copies it to the GPU, then each owner in turn broadcasts
-- to every inference rank while the engine loads the previous IPC slot. Read from
-- MoonshotAI/checkpoint-engine @ 59a3c4ff (doc/research/frameworks.md §7, §11). In refit
-- the owner of a tensor is the training GPU holding its first element. Not modelled: the
-- P2P mode (Mooncake RDMA reads), the bucket's free-memory cap (free/3 or free/2, which the
-- 8 GiB default meets on 80 GB GPUs and up), the per-bucket all-reduce and ZMQ round trip
-- beyond the cluster's bucket_overhead_us.
local CE, AT = "MoonshotAI/checkpoint-engine", "59a3c4ff"

return framework.profile{
    name = "checkpoint-engine",
    strategies = { "broadcast" },
    broadcast = {
        -- The group is every inference rank; the owner broadcasts to all of them.
        communicator = "receivers",
        -- In broadcast mode the owner of a bucket is its broadcaster (_gen_h2d_buckets).
        root = "owner",
        -- Registered weights in pinned CPU memory, one H2D copy per bucket (_copy_to_buffer).
        gather = "host",
        -- PS_MAX_BUCKET_SIZE_GB = 8 (_detect_bucket_size l.604-654).
        bucket = { mib = 8192 },
        -- IPC slot i mod 2: the engine loads slot k while k+1 is broadcast.
        buffers = 2,
        -- The owner D2D-copies the bucket from its H2D buffer into the IPC slot.
        pack_copy = true,
        -- The checkpoint's bytes as stored (an FP8 checkpoint ships FP8): nothing is
        -- converted on the way, so FP8 is on the wire.
        quantize = "sender",
        -- No conversion per tensor at refit time (registration is done before).
        export_calls = 0,
        -- vLLM load_weights on the IPC views: one loader call per HF tensor.
        load_calls = 1,
    },
    -- process_weights_after_loading at the end; its cost is not measured (§8), so 0.
    finalize_s = 0,
    sources = {
        { field = "strategies", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "ParameterServer._update_per_bucket",
          says = "broadcast mode: per bucket H2D on every owner, then each owner broadcasts "
              .. "(l.723-884)" },
        { field = "broadcast.communicator", repo = CE, commit = AT,
          file = "checkpoint_engine/ps.py",
          func = "_update_per_bucket", says = "broadcast from the owner to the whole group, "
              .. "every inference rank of every instance" },
        { field = "broadcast.root", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "_gen_h2d_buckets", says = "each owner's registered bytes cut into buckets; "
              .. "the owner broadcasts its buckets (l.61-99)" },
        { field = "broadcast.gather", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "register_checkpoint, _copy_to_buffer",
          says = "weights pinned in CPU memory (l.274-347); H2D copy per bucket (l.656-686)" },
        { field = "broadcast.bucket", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "_detect_bucket_size", says = "min(max(PS_MAX_BUCKET_SIZE_GB 8 GiB, largest "
              .. "tensor), free/3 or free/2) (l.604-654)" },
        { field = "broadcast.buffers", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "_update_per_bucket", says = "D2D copy into IPC slot i mod 2; the engine "
              .. "loads slot k while k+1 is broadcast" },
        { field = "broadcast.load_calls", repo = CE, commit = AT,
          file = "checkpoint_engine/worker.py",
          func = "update_weights_from_ipc", says = "model.load_weights on the IPC views, "
              .. "process_weights_after_loading at the end (l.38-110)" },
    },
}
