-- miles (radixark/miles, a fork of slime), non-colocated: its broadcast path, the same design
-- as slime (strategy broadcast), and its P2P path (--update-weight-transfer-mode p2p,
-- strategy p2p, planned as reshard: Mooncake RDMA writes from pinned CPU memory after SGLang's own loader runs
-- on a CPU replica of each target rank). Read from radixark/miles @ 31f1ca96
-- (doc/research/frameworks.md §5, §11; doc/research/p2p-paths.md §1). Not modelled: the
-- colocated path; the P2P path's Gloo barriers between phases (no published cost); its
-- pairing (stage rank r writes target r): refit's reshard plan feeds each engine GPU the same
-- bytes from the holders it picks by load.
local MILES, AT = "radixark/miles", "31f1ca96"
local DIR = "miles/backends/megatron_utils/update_weight/update_weight_from_distributed/"

return framework.profile{
    name = "miles",
    strategies = { "broadcast", "p2p" },
    broadcast = {
        -- Group = the stage's source + all engine GPUs (broadcast.py l.201-245).
        communicator = "receivers",
        -- Source = intra-DP/CP rank 0 and TP rank 0 of each PP stage (l.94-97).
        root = "stage",
        -- TP gathers per update unit within the stage; experts gathered over EP once
        -- bucket x EP passes the threshold (mixin.py l.98-226).
        gather = "stage",
        -- --update-weight-buffer-size 512 MiB (miles/utils/arguments.py l.771).
        bucket = { mib = 512 },
        -- Global Ray lock per bucket, as slime (broadcast.py l.105-127).
        buffers = 1,
        wait_load = true,
        -- One async broadcast per tensor, made contiguous first (l.259-291).
        per_tensor = true,
        -- Quantised on the source as slime (processors/quantizer_fp8.py).
        quantize = "sender",
        export_calls = 1,
        load_calls = 1,
        -- SGLang's load_weights per received tensor; for MoE models it scans the expert
        -- mapping (3 entries an expert) linearly per tensor (sgl-project/sglang PR #19299).
        loader = "sglang",
    },
    -- P2P: the trainers' point-to-point writes (p2p.py UpdateWeightP2P).
    p2p = {
        -- Each engine GPU gets its own slice (the plan: reshard).
        plan = "reshard",
        -- Every rank of a stage gathers the stage's whole tensors (the broadcast path's
        -- bucketed gather, mixin.py l.98-226: TP all-gather per tensor, EP per bucket).
        gather = "stage",
        -- Per distinct target rank, SGLang's load_weights on a CPU replica (p2p.py
        -- l.139-140, 248-298), copying each tensor's slice into pinned host memory, then one
        -- batched RDMA WRITE per session into the engine's weights (l.356-390).
        cpu_loader = true,
        from = "host",
        verb = "write",
        into = "weights",
        -- Writes to every target rank but the last are waited (l.152-163).
        wait_nonlast = true,
        -- --update-weight-buffer-size, the broadcast path's bucket (arguments.py l.771).
        bucket = { mib = 512 },
        buffers = 1,
        -- convert_to_hf quantises to FP8 on every source (l.123-126).
        quantize = "sender",
        export_calls = 1,
        -- The replica's loader: one SGLang load_weights call per HF tensor and target rank.
        load_calls = 1,
        loader = "sglang",
        -- First refit: register_cpu_memory, one region per replica parameter (l.112-120).
        register = "replica_params",
    },
    finalize_s = 0, -- post_load_weights: 0.884 s measured once (Kimi-K2 FP8), else unpublished
    sources = {
        { field = "strategies", repo = MILES, commit = AT, file = DIR .. "broadcast.py",
          func = "broadcast path", says = "same design as slime: per-stage source broadcasts "
              .. "to every engine GPU (l.94-291)" },
        { field = "broadcast.communicator", repo = MILES, commit = AT, file = DIR .. "broadcast.py",
          func = "group creation", says = "group = source + all engine GPUs (l.201-245)" },
        { field = "broadcast.root", repo = MILES, commit = AT, file = DIR .. "broadcast.py",
          func = "source selection", says = "intra-DP/CP rank 0 and TP rank 0 of each PP "
              .. "stage (l.94-97)" },
        { field = "broadcast.gather", repo = MILES, commit = AT, file = DIR .. "mixin.py",
          func = "update units", says = "update units bucketed, expert threshold scaled by "
              .. "EP (l.98-226)" },
        { field = "broadcast.bucket", repo = MILES, commit = AT, file = "miles/utils/arguments.py",
          func = "--update-weight-buffer-size", says = "default 512 MiB (l.771)" },
        { field = "broadcast.wait_load", repo = MILES, commit = AT, file = DIR .. "broadcast.py",
          func = "global lock", says = "global Ray lock per bucket (l.105-127)" },
        { field = "broadcast.per_tensor", repo = MILES, commit = AT, file = DIR .. "broadcast.py",
          func = "tensor broadcast", says = "one async broadcast per tensor (l.259-291)" },
        { field = "broadcast.quantize", repo = MILES, commit = AT,
          file = "miles/backends/megatron_utils/megatron_to_hf/processors/quantizer_fp8.py",
          func = "quantize_params_fp8", says = "FP8 block quantisation on the sender, as slime" },
        { field = "p2p", repo = MILES, commit = AT, file = DIR .. "p2p.py",
          func = "UpdateWeightP2P", says = "--update-weight-transfer-mode p2p: the bucketed "
              .. "gather, then per target rank a CPU replica load and RDMA writes" },
        { field = "p2p.cpu_loader", repo = MILES, commit = AT, file = DIR .. "p2p.py",
          func = "_update_weight_implementation, _create_cpu_replica",
          says = "model_replica.load_weights per distinct engine rank into pinned replica "
              .. "parameters, then batch_transfer_sync_write per session (l.122-165, 248-298)" },
        { field = "p2p.wait_nonlast", repo = MILES, commit = AT, file = DIR .. "p2p.py",
          func = "_update_weight_implementation",
          says = "futures of every rank but the last are waited; the last run in the background "
              .. "on 4 workers (l.143-163)" },
        { field = "p2p.register", repo = MILES, commit = AT,
          file = DIR .. "p2p_transfer_utils.py", func = "register_cpu_memory",
          says = "first refit: one register_memory per replica parameter (l.191-205)" },
        { field = "broadcast.loader", repo = "sgl-project/sglang", commit = "3e4a39ee",
          file = "python/sglang/srt/models/deepseek_v2.py", func = "load_weights",
          says = "per weight a loop over expert_params_mapping with a substring test an entry; "
              .. "PR #19299 measured 36.9 us a tensor at 771 entries, 0.7 us with a dict" },
    },
}
