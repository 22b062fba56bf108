-- miles (radixark/miles, a fork of slime), non-colocated broadcast path: the same design as
-- slime. Read from radixark/miles @ 31f1ca96 (doc/research/frameworks.md §5, §11). Not
-- modelled: miles' P2P path (Mooncake RDMA writes from pinned CPU memory after SGLang's own
-- loader runs on a CPU replica of the target rank), the colocated path; SGLang's receive
-- side was not read (§10), so load_calls = 1 rests on one name and broadcast per tensor.
local MILES, AT = "radixark/miles", "31f1ca96"
local DIR = "miles/backends/megatron_utils/update_weight/update_weight_from_distributed/"

return framework.profile{
    name = "miles",
    strategies = { "broadcast" },
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
    finalize_s = 0, -- no engine finalisation measured or read (SGLang unread)
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
        { field = "broadcast.loader", repo = "sgl-project/sglang", commit = "3e4a39ee",
          file = "python/sglang/srt/models/deepseek_v2.py", func = "load_weights",
          says = "per weight a loop over expert_params_mapping with a substring test an entry; "
              .. "PR #19299 measured 36.9 us a tensor at 771 entries, 0.7 us with a dict" },
    },
}
