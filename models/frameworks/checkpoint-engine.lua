-- MoonshotAI checkpoint-engine, broadcast mode: weights sit in pinned host memory on their
-- owner; per bucket every owner copies it to the GPU, then each owner in turn broadcasts
-- to every inference rank while the engine loads the previous IPC slot. Read from
-- MoonshotAI/checkpoint-engine @ 59a3c4ff (doc/research/frameworks.md §7, §11). In refit
-- the owner of a tensor is the training GPU holding its first element. Its P2P mode
-- (ParameterServer.update(ranks=[...]), strategy p2p; doc/research/p2p-paths.md §3) reads
-- each bucket over Mooncake RDMA from the owner's pinned memory into a reader GPU, one per
-- NIC, then broadcasts as broadcast mode does. Not modelled: the bucket's free-memory cap (free/3 or free/2, which the
-- 8 GiB default meets on 80 GB GPUs and up), the per-bucket all-reduce and ZMQ round trip
-- beyond the cluster's bucket_overhead_us; in P2P mode, that the reader (an inference GPU),
-- not the owner, roots the broadcast (refit's plan keeps the owner as root).
local CE, AT = "MoonshotAI/checkpoint-engine", "59a3c4ff"

return framework.profile{
    name = "checkpoint-engine",
    strategies = { "broadcast", "p2p" },
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
    -- P2P mode: the H2D copy of broadcast mode becomes a remote read; the rest is the same.
    p2p = {
        plan = "broadcast",
        gather = "host",
        -- Mooncake batch_transfer_sync_read from the owner's registered pinned pool into the
        -- reader's GPU buffer (_copy_to_buffer l.656-686; p2p_store.py l.73-78).
        from = "host",
        verb = "read",
        into = "buffer",
        bucket = { mib = 8192 },
        buffers = 2,
        export_calls = 0,
        load_calls = 1,
        -- The reader's H2D buffer is registered with Mooncake at every update and
        -- unregistered at its end (__ipc_buffer__, l.777-782, 885-886): one region.
        register = "buffers",
        register_regions = 1,
        register_every_refit = true,
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
        { field = "p2p", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "update, _assign_receiver_ranks, _copy_to_buffer",
          says = "ranks given: receivers (one per local RDMA device) READ the owners' buckets "
              .. "round by round, one read per remote NIC a round, then broadcast "
              .. "(l.101-156, 544-592, 656-686, 803-852)" },
        { field = "p2p.buffers", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "_update_per_bucket", says = "2 IPC slots: the engine loads slot k while k+1 is "
              .. "read and broadcast (l.763-852)" },
        { field = "p2p.register", repo = CE, commit = AT, file = "checkpoint_engine/ps.py",
          func = "_update_per_bucket", says = "the H2D buffer registered with the P2P store "
              .. "every update, unregistered at the end (l.777-782, 885-886)" },
        { field = "broadcast.load_calls", repo = CE, commit = AT,
          file = "checkpoint_engine/worker.py",
          func = "update_weights_from_ipc", says = "model.load_weights on the IPC views, "
              .. "process_weights_after_loading at the end (l.38-110)" },
    },
}
