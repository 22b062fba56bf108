-- verl, non-colocated: the checkpoint engine's `nccl` backend (trainer rank 0 broadcasts
-- buckets to every rollout rank). Read from volcengine/verl @ b178a3cd
-- (doc/research/frameworks.md §3.2, §11), and the colocated hybrid engine (CUDA IPC, §3.1),
-- verl's default. Not modelled: the one-step-off recipe's per-tensor broadcast over all
-- actor and rollout ranks, the non-colocated receiver's extra copies (checkpoint-engine
-- buffer -> IPC bucket -> clone -> parameter: load_calls counts the loader, not those
-- copies).
local VERL, AT = "volcengine/verl", "b178a3cd"

return framework.profile{
    name = "verl",
    strategies = { "broadcast" },
    broadcast = {
        -- World = rollout ranks + 1: trainer rank 0 gets rank 0, other trainer ranks -1
        -- (NCCLCheckpointEngine build_topology l.152-163).
        communicator = "receivers",
        root = "first",
        -- Every trainer rank runs the exporter (Bridge export or per_tensor_generator: PP
        -- broadcast, EP/ETP/TP all-gathers per tensor); only rank 0 keeps the output.
        gather = "export",
        -- checkpoint_engine.update_weights_bucket_megabytes = 2048 (config/rollout.py l.130).
        bucket = { mib = 2048 },
        -- prepare() allocates two bucket buffers; the broadcast runs in a thread while the
        -- next bucket is packed (send_weights l.222-296).
        buffers = 2,
        -- Each tensor is cast to the rollout dtype and copied into the send buffer.
        pack_copy = true,
        -- FP8 rollouts: gen-side block quantisation of the received tensors
        -- (vllm_fp8_utils.py load_quanted_weights l.160).
        quantize = "receiver_full",
        -- One conversion (convert_param) per tensor; one vLLM weight_loader call per HF
        -- tensor on the rollout side (load_weights).
        export_calls = 1,
        load_calls = 1,
    },
    -- The hybrid engine (actor and rollout on every GPU, verl's default): rollout_mode.
    colocated = {
        -- FSDP (verl's default backend): state_dict() and full_tensor() on every DTensor,
        -- one all-gather per parameter on every rank (fsdp_workers.py rollout_mode l.677-750).
        -- A Megatron actor exports through Megatron-Bridge: override with export = "export".
        export = "fsdp",
        -- One CUDA buffer of update_weights_bucket_megabytes (2048 MiB), shared by IPC handle
        -- once per refit (vllm_rollout.py update_weights l.146-215).
        bucket = { mib = 2048 },
        -- When the next tensor does not fit, the sender synchronises the device, sends the
        -- bucket's metadata over ZMQ REQ/REP and waits for the ACK before refilling.
        buffers = 1,
        -- The rollout clones each tensor out of the IPC buffer and ACKs, then loads: its load
        -- overlaps the sender's next fill (utils.py update_weights_from_ipc l.158-205).
        clone = true,
        -- FP8 rollouts: load_quanted_weights block-quantises on the rollout side.
        quantize = "receiver_full",
        export_calls = 1,
        load_calls = 1,
        -- rollout.resume(tags=["weights"]) wakes vLLM's weights (sleep mode keeps them in
        -- host memory); the optimizer is offloaded by the update step, not the refit; FSDP
        -- params go to host only with param_offload (default False).
        offload_optimizer = false,
        wake_weights = true,
        offload_weights = false,
    },
    -- The rollout adapter's finalize runs process_weights_after_loading; no measurement of
    -- its cost was found (frameworks.md §8), so 0.
    finalize_s = 0,
    sources = {
        { field = "strategies", repo = VERL, commit = AT,
          file = "verl/checkpoint_engine/base.py", func = "CheckpointEngineManager.update_weights",
          says = "trainer send_weights || rollout receive_weights, then finalize (l.379-410)" },
        { field = "broadcast.communicator", repo = VERL, commit = AT,
          file = "verl/checkpoint_engine/nccl_checkpoint_engine.py", func = "build_topology",
          says = "trainer rank 0 is rank 0, other trainer ranks -1, rollout ranks 1..R "
              .. "(l.152-163)" },
        { field = "broadcast.gather", repo = VERL, commit = AT,
          file = "verl/utils/megatron_utils.py", func = "per_tensor_generator",
          says = "per tensor: PP broadcast, EP/ETP/TP all-gathers, convert_param "
              .. "(l.928-1045)" },
        { field = "broadcast.bucket", repo = VERL, commit = AT,
          file = "verl/workers/config/rollout.py", func = "update_weights_bucket_megabytes",
          says = "default 2048 MiB (l.130)" },
        { field = "broadcast.buffers", repo = VERL, commit = AT,
          file = "verl/checkpoint_engine/nccl_checkpoint_engine.py",
          func = "send_weights, BroadcastOperation",
          says = "pack into the send buffer, swap buffers, broadcast in a thread "
              .. "(l.43-95, 222-296)" },
        { field = "broadcast.quantize", repo = VERL, commit = AT,
          file = "verl/utils/vllm/vllm_fp8_utils.py", func = "load_quanted_weights",
          says = "FP8 rollouts quantise on the rollout side, blocks [128, 128] (l.160)" },
        { field = "broadcast.load_calls", repo = VERL, commit = AT,
          file = "verl/workers/rollout/vllm_rollout/utils.py", func = "update_weights_from_ipc",
          says = "clone each tensor out of the IPC bucket, then model.load_weights "
              .. "(l.158-205)" },
        { field = "colocated", repo = VERL, commit = AT, file = "verl/workers/fsdp_workers.py",
          func = "rollout_mode", says = "state_dict, rename keys, wake vLLM weights, "
              .. "full_tensor() per parameter into update_weights, resume the KV cache "
              .. "(l.677-750)" },
        { field = "colocated.bucket", repo = VERL, commit = AT,
          file = "verl/workers/rollout/vllm_rollout/vllm_rollout.py", func = "update_weights",
          says = "one 2048 MiB CUDA buffer shared by IPC handle; on overflow synchronise, "
              .. "send metadata over ZMQ, wait for the ACK (l.146-215)" },
        { field = "colocated.clone", repo = VERL, commit = AT,
          file = "verl/workers/rollout/vllm_rollout/utils.py", func = "update_weights_from_ipc",
          says = "clone each tensor out of the IPC buffer, synchronise, ACK, then load_weights "
              .. "(l.158-205)" },
    },
}
