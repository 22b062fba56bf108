-- slime, non-colocated: UpdateWeightFromDistributed, one source per training PP stage
-- broadcasting tensor by tensor to every engine GPU, one bucket in flight at a time. Read
-- from THUDM/slime @ 624b824a (doc/research/frameworks.md §4.1, §11). Not modelled: the
-- colocated path (CUDA IPC handles over Gloo, §4.2); SGLang's receive side was not read
-- (§10), so load_calls = 1 rests on what slime sends: one name and one broadcast per tensor.
local SLIME, AT = "THUDM/slime", "624b824a"
local DIR = "slime/backends/megatron_utils/update_weight/"

return framework.profile{
    name = "slime",
    strategies = { "broadcast" },
    broadcast = {
        -- Group slime-pp_<pp_rank> = that stage's source + every engine GPU
        -- (connect_rollout_engines_from_distributed l.269-316).
        communicator = "receivers",
        -- The DP=0, TP=0 rank of each PP stage sends its own layers (l.76-81).
        root = "stage",
        -- TP all-gather per parameter within the stage, EP all-gather per expert bucket
        -- (_iter_non_expert_chunks, _iter_expert_chunks l.154-239).
        gather = "stage",
        -- --update-weight-buffer-size 512 MiB (slime/utils/arguments.py l.528).
        bucket = { mib = 512 },
        -- A global Ray lock: one bucket of one stage in flight, and the sender waits for
        -- the engines' load (ray.get) before releasing it (l.241-266, 328-356).
        buffers = 1,
        wait_load = true,
        -- One async dist.broadcast per tensor (update_weights_from_distributed l.328-356).
        per_tensor = true,
        -- An FP8 rollout config: quantize_params_fp8 block-quantises on the source, FP8 and
        -- scales on the wire.
        quantize = "sender",
        -- convert_to_hf per parameter on the source; one (name, dtype, shape) entry and
        -- one broadcast per tensor to every engine.
        export_calls = 1,
        load_calls = 1,
        -- SGLang's load_weights per received tensor; for MoE models it scans the expert
        -- mapping (3 entries an expert) linearly per tensor (sgl-project/sglang PR #19299).
        loader = "sglang",
    },
    -- No finalisation step read on the engine side (SGLang unread); 0.
    finalize_s = 0,
    sources = {
        { field = "strategies", repo = SLIME, commit = AT,
          file = DIR .. "update_weight_from_distributed.py", func = "UpdateWeightFromDistributed",
          says = "non-colocated refit: per PP stage, NCCL broadcast to the engines" },
        { field = "broadcast.communicator", repo = SLIME, commit = AT,
          file = DIR .. "update_weight_from_distributed.py",
          func = "connect_rollout_engines_from_distributed",
          says = "group slime-pp_{pp_rank}: the source (rank 0) + every engine GPU "
              .. "(l.269-316)" },
        { field = "broadcast.root", repo = SLIME, commit = AT,
          file = DIR .. "update_weight_from_distributed.py", func = "UpdateWeightFromDistributed",
          says = "source = DP 0 (with CP) and TP 0 of each PP stage (l.76-81)" },
        { field = "broadcast.gather", repo = SLIME, commit = AT, file = DIR .. "common.py",
          func = "all_gather_param",
          says = "TP all-gather per parameter within the stage; EP all-gather per expert "
              .. "bucket (l.15-58; update_weight_from_distributed.py l.154-239)" },
        { field = "broadcast.bucket", repo = SLIME, commit = AT, file = "slime/utils/arguments.py",
          func = "--update-weight-buffer-size", says = "default 512 MiB (l.528)" },
        { field = "broadcast.wait_load", repo = SLIME, commit = AT,
          file = DIR .. "update_weight_from_distributed.py",
          func = "_update_bucket_weights_from_distributed",
          says = "global Ray lock per bucket; ray.get of the engines' load before release "
              .. "(l.241-266)" },
        { field = "broadcast.per_tensor", repo = SLIME, commit = AT,
          file = DIR .. "update_weight_from_distributed.py",
          func = "update_weights_from_distributed",
          says = "one async dist.broadcast per tensor, then wait for all (l.328-356)" },
        { field = "broadcast.quantize", repo = SLIME, commit = AT,
          file = "slime/backends/megatron_utils/megatron_to_hf/processors/quantizer_fp8.py",
          func = "quantize_params_fp8",
          says = "FP8 rollout: block quantisation on the source (l.10-118)" },
        { field = "broadcast.export_calls", repo = SLIME, commit = AT,
          file = "slime/backends/megatron_utils/megatron_to_hf/__init__.py",
          func = "convert_to_hf", says = "per parameter: padding removed, renamed, split, "
              .. "quantised (l.23-33)" },
        { field = "broadcast.loader", repo = "sgl-project/sglang", commit = "3e4a39ee",
          file = "python/sglang/srt/models/deepseek_v2.py", func = "load_weights",
          says = "per weight a loop over expert_params_mapping with a substring test an entry; "
              .. "PR #19299 measured 36.9 us a tensor at 771 entries, 0.7 us with a dict" },
    },
}
