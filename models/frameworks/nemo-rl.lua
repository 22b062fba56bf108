-- NeMo RL, non-colocated: its default gather-and-broadcast path and its `nccl_reshard`
-- hybrid path (NCCL M2N for the FFN projections, packed broadcast for the rest). Read from
-- NVIDIA-NeMo/RL @ 7ea279ab and NVIDIA-NeMo/Megatron-Bridge @ 067f987d
-- (doc/research/frameworks.md §2, §11), its colocated CUDA-IPC path (§2.3) and its NIXL
-- checkpoint-engine transport (refit_transport: nixl, strategy p2p; p2p-paths.md §2). Not
-- modelled: the SGLang HTTP path; on the NIXL path, tensors that span buckets reassembled on
-- the CPU (merge_weight_chunk_batches) and the ZMQ message and NIXL notification per bucket
-- beyond the cluster's per-message costs (no published figure).
local RL, RL_AT = "NVIDIA-NeMo/RL", "7ea279ab"
local BRIDGE, BRIDGE_AT = "NVIDIA-NeMo/Megatron-Bridge", "067f987d"

return framework.profile{
    name = "nemo-rl",
    -- broadcast: the default path (refit_transport nccl); hybrid: nccl_reshard, whose bulk
    -- is the FFN projections (policy.default mirrors is_nccl_reshard_param).
    strategies = { "broadcast", "hybrid", "p2p" },
    broadcast = {
        -- model_update_group = train world + inference world; every train worker joins
        -- (CollectiveWeightSynchronizer.init_communicator).
        communicator = "all",
        -- Every train rank calls the producer with src=0 (broadcast_weights_for_collective).
        root = "first",
        -- Megatron-Bridge's export on every train rank: per tensor a PP broadcast, a TP
        -- all-gather, and for experts one EP all-gather per local expert index.
        gather = "export",
        -- min(total GPU memory x NRL_REFIT_BUFFER_MEMORY_RATIO (0.02), 5 GiB)
        -- (packed_tensor.py l.24-32).
        bucket = { hbm_fraction = 0.02, max_mib = 5120 },
        -- NRL_REFIT_NUM_BUFFERS = 2: export and pack of bucket k+1 run on the other stream
        -- while bucket k broadcasts (packed_broadcast_producer l.82-118).
        buffers = 2,
        -- torch.cat of the bucket's tensors before its one broadcast (l.108-118).
        pack_copy = true,
        -- FP8 rollouts: every generator rank block-quantises each full received BF16 tensor
        -- before vLLM slices it (quantization/fp8.py load_weights l.476-530).
        quantize = "receiver_full",
        -- One Bridge conversion task per HF tensor (stream_weights_megatron_to_hf; experts
        -- one local expert index at a time, gather_from_ep_ranks).
        export_calls = 1,
        -- vLLM's model.load_weights: one weight_loader call per HF tensor (per expert and
        -- projection for FusedMoE), vllm_backend.py _load_weights l.574-594.
        load_calls = 1,
    },
    -- process_weights_after_loading runs once per refit (_weight_update_lifecycle finalize,
    -- l.610-630); no measurement of its cost was found (frameworks.md §8), so 0.
    finalize_s = 0,
    reshard = {
        -- NCCL M2N (nccl.m2n.reshard, NCCL_RESHARD_COPY_ALGORITHM PACK): per-domain leaders
        -- and a ring of domains, refit's hierarchical (NVIDIA/nccl-extensions
        -- src/reshard_loadbalance.cc).
        plan = "hierarchical",
        -- NRL_REFIT_NUM_STREAMS = 2: the generator issues stage group i on stream i mod 2 and
        -- blocks on stage i-2 first (vllm_backend.py nccl_reshard_refit l.1148, l.1156).
        stage_groups = 2,
        -- torch.cuda.synchronize, then _broadcast_misc_params_packed (l.2911-2930).
        misc_after_bulk = true,
        -- `pre` stacks the rank's per-expert views into one [E_local, ...] tensor.
        stack_experts = true,
        -- Fused targets (gate_up_proj, w13): temp buffer, then a copy into the fused slice
        -- (build_hf_to_local_param_map l.811-949).
        fused_copy = true,
        -- One xferdtensor (nccl.m2n.reshard) per bulk tensor, no group fusion
        -- (xferdtensor.py l.98-180).
        calls = 1,
        -- Each xferdtensor call runs NCCL M2N's kernel: a barrier at its start and one at
        -- its end over the communicator (models/frameworks/m2n.lua).
        barriers = 2,
    },
    -- refit_transport: nixl (CheckpointEngineWeightSynchronizer): policy rank i feeds rollout
    -- rank i (train world >= rollout world), each vLLM worker reads a bucket over NIXL from
    -- its policy rank's GPU buffer, loads it, then reads the next (p2p-paths.md §2).
    p2p = {
        -- Experts sharded by the target (shard_expert_weights), dense tensors whole: refit
        -- plans and replays the shards; the step charges the dense tensors' whole bytes.
        plan = "reshard",
        -- Megatron-Bridge export on every policy rank: every whole HF tensor of every stage
        -- (_iter_params_with_optional_kv_scales).
        gather = "export",
        select = "dense_whole",
        from = "gpu",
        verb = "read",
        into = "buffer",
        -- copy_(non_blocking) of each chunk into the registered bucket (send_weights).
        pack_copy = true,
        -- READ k, load k, synchronise, then READ k + 1 (vLLM checkpoint_engine.py).
        receiver_serial = true,
        -- update_weights_bucket_memory_ratio 0.05 of the smallest GPU's total memory: "4 GiB
        -- bucket on an 80 GiB GPU" (checkpoint_engine_weight_synchronizer.py l.107-148).
        bucket = { hbm_fraction = 0.05, max_mib = 1 << 20 },
        -- Two buckets a worker: the sender fills the next once the receiver has read the
        -- last (flush_bucket waits for the read notification, not the load).
        buffers = 2,
        -- BF16 on the wire (FP8 with sharded experts is refused, guide l.157-170).
        quantize = "sender",
        export_calls = 1,
        -- vLLM load_weights per dense HF tensor; experts one stack + one copy per group.
        load_calls = 1,
        -- Two CuPy buckets a worker registered with NIXL once (prepare l.255-264).
        register = "buffers",
        register_regions = 2,
    },
    -- colocated.enabled (NeMo RL's default): IPCWeightSynchronizer on every GPU.
    colocated = {
        -- Every train rank runs the full Bridge export (stream_weights_via_ipc_zmq_impl).
        export = "export",
        -- refit_buffer_size_gb, or NRL_REFIT_BUFFER_MEMORY_RATIO (0.3 here) x free memory,
        -- split into 2 ping-pong buffers: 0.15 x HBM a buffer [derived: refit does not model
        -- the free memory after the optimizer's offload, so it takes the GPU's memory], no
        -- cap in the code (max_mib is the schema's 1 TiB).
        bucket = { hbm_fraction = 0.15, max_mib = 1 << 20 },
        -- Two buffers: the sender fills one while the engine loads the other; it waits for
        -- the previous buffer's ACK before refilling (l.361-470).
        buffers = 2,
        -- The engine views the IPC buffer's slices and loads them (no clone).
        clone = false,
        quantize = "receiver_full",
        export_calls = 1,
        load_calls = 1,
        -- offload optimizer, wake vLLM's weights, stream, offload the model, rebuild the
        -- KV cache (ipc_weight_synchronizer.py l.40-135).
        offload_optimizer = true,
        wake_weights = true,
        offload_weights = true,
    },
    sources = {
        { field = "strategies", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/nccl_reshard_utils.py", func = "is_nccl_reshard_param",
          says = "nccl_reshard moves the FFN projections by M2N, the rest by packed broadcast" },
        { field = "broadcast.communicator", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/collective_weight_synchronizer.py",
          func = "CollectiveWeightSynchronizer.init_communicator",
          says = "world size = train world + inference world (l.105-128)" },
        { field = "broadcast.root", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/policy/workers/megatron_policy_worker.py",
          func = "broadcast_weights_for_collective",
          says = "every train rank runs the producer with src=0 (l.2496-2513)" },
        { field = "broadcast.gather", repo = BRIDGE, commit = BRIDGE_AT,
          file = "src/megatron/bridge/models/conversion/param_mapping.py",
          func = "broadcast_from_pp_rank, gather_from_tp_ranks, gather_from_ep_ranks",
          says = "per task: PP broadcast, TP all-gather, one EP all-gather per local expert "
              .. "(l.346-431, 618-629, 727-820)" },
        { field = "broadcast.bucket", repo = RL, commit = RL_AT,
          file = "nemo_rl/utils/packed_tensor.py", func = "packed_broadcast_producer",
          says = "bucket = min(total memory x NRL_REFIT_BUFFER_MEMORY_RATIO 0.02, 5 GiB) "
              .. "(l.24-32)" },
        { field = "broadcast.buffers", repo = RL, commit = RL_AT,
          file = "nemo_rl/utils/packed_tensor.py", func = "packed_broadcast_producer",
          says = "NRL_REFIT_NUM_BUFFERS 2 streams; torch.cat then one broadcast per bucket "
              .. "(l.82-118)" },
        { field = "broadcast.quantize", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/quantization/fp8.py", func = "load_weights",
          says = "each generator rank block-quantises the full BF16 tensor (l.476-530)" },
        { field = "broadcast.export_calls", repo = BRIDGE, commit = BRIDGE_AT,
          file = "src/megatron/bridge/models/conversion/model_bridge.py",
          func = "stream_weights_megatron_to_hf",
          says = "one conversion task per tensor, walked on every rank (l.1445-)" },
        { field = "broadcast.load_calls", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/vllm_backend.py",
          func = "update_weights_from_collective, _load_weights",
          says = "per bucket vLLM model.load_weights on full HF tensors (l.574-594, 751-779)" },
        { field = "finalize_s", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/vllm_backend.py",
          func = "_weight_update_lifecycle",
          says = "process_weights_after_loading once after the last bucket (l.610-630); "
              .. "its cost is not measured" },
        { field = "reshard.plan", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/xferdtensor.py", func = "xferdtensor",
          says = "each bulk tensor goes through nccl.m2n reshard (M2N: per-domain leaders, "
              .. "a ring of domains; NVIDIA/nccl-extensions src/reshard_loadbalance.cc)" },
        { field = "reshard.stage_groups", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/vllm_backend.py", func = "nccl_reshard_refit",
          says = "stage group i on stream i mod NRL_REFIT_NUM_STREAMS (2); the host waits "
              .. "on stage i-2 (l.1096-1191)" },
        { field = "reshard.misc_after_bulk", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/policy/workers/megatron_policy_worker.py",
          func = "nccl_reshard_refit, _broadcast_misc_params_packed",
          says = "synchronize after the bulk, then the misc packed broadcast (l.2835-2930)" },
        { field = "reshard.stack_experts", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/policy/workers/megatron_policy_worker.py",
          func = "nccl_reshard_refit",
          says = "pre stacks the rank's expert views into [E_local, ...] (l.2835-2895)" },
        { field = "reshard.fused_copy", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/vllm_backend.py",
          func = "build_hf_to_local_param_map",
          says = "fused targets: temp buffer pre, copy into the fused slice post (l.811-949)" },
        { field = "reshard.barriers", repo = "NVIDIA/nccl-extensions", commit = "44d2de0d",
          file = "src/reshard_mesh.cc", func = "the reshard kernel",
          says = "an initial barrier, then a final fence and barrier over the communicator" },
        { field = "colocated", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/ipc_weight_synchronizer.py", func = "IPCWeightSynchronizer",
          says = "offload optimizer, wake vLLM weights, stream via IPC, offload model, rebuild "
              .. "KV cache (l.40-135)" },
        { field = "colocated.bucket", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/ipc_weight_synchronizer.py", func = "buffer size",
          says = "refit_buffer_size_gb or NRL_REFIT_BUFFER_MEMORY_RATIO 0.3 x free memory, "
              .. "split into 2 buffers (l.124)" },
        { field = "colocated.buffers", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/policy/utils.py", func = "stream_weights_via_ipc_zmq_impl",
          says = "2 ping-pong buffers: fill one while the engine loads the other, wait for the "
              .. "previous buffer's ACK before refilling (l.361-470)" },
        { field = "colocated.load_calls", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/vllm_backend.py",
          func = "update_weights_via_ipc_zmq",
          says = "rebuild the IPC tensor, view the slices, load_weights, synchronise, ACK "
              .. "(l.641-749)" },
        { field = "p2p", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/checkpoint_engine_weight_synchronizer.py",
          func = "sync_weights, _source_rank_for_rollout",
          says = "refit_transport nixl: policy rank i -> rollout rank i, NIXL READ per bucket "
              .. "(l.41-61, 209-245)" },
        { field = "p2p.select", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/refit_layout.py",
          func = "select_hf_weight_for_vllm_target",
          says = "dense tensors go whole; owned experts narrowed to the target TP slice "
              .. "(l.74-118)" },
        { field = "p2p.bucket", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/checkpoint_engine_weight_synchronizer.py",
          func = "_resolve_bucket_size_bytes",
          says = "smallest total GPU memory x update_weights_bucket_memory_ratio 0.05 "
              .. "(l.107-148)" },
        { field = "p2p.buffers", repo = RL, commit = RL_AT,
          file = "nemo_rl/utils/checkpoint_engines/nixl.py", func = "send_weights, flush_bucket",
          says = "two registered buckets; the sender packs the next once NIXL notifies that the "
              .. "previous bucket was read (l.38, 340-411)" },
        { field = "p2p.receiver_serial", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/checkpoint_engine.py",
          func = "update_weights_from_checkpoint_engine",
          says = "READ a bucket, load it, synchronise the stream, then READ the next (l.139-167)" },
        { field = "p2p.load_calls", repo = RL, commit = RL_AT,
          file = "nemo_rl/models/generation/vllm/refit_loader.py",
          func = "_load_sharded_expert_weight_groups",
          says = "experts: one torch.stack and one copy_ per (parameter, w1/w2/w3) group; dense "
              .. "through vLLM load_weights (l.173-272)" },
        { field = "p2p.register", repo = RL, commit = RL_AT,
          file = "nemo_rl/utils/checkpoint_engines/nixl.py", func = "prepare",
          says = "two bucket buffers a worker registered once (l.255-264); release_after_refit "
              .. "re-registers every refit" },
        { field = "reshard.calls", repo = RL, commit = RL_AT,
          file = "nemo_rl/weight_sync/xferdtensor.py", func = "xferdtensor",
          says = "one nccl.m2n reshard per tensor, no group fusion (l.98-180)" },
    },
}
