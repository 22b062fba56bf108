-- layout.lua: the two sides of a scenario, normalised: a Megatron-style training layout and a
-- vLLM/SGLang-style inference layout, with derived sizes and the layers of each PP stage.

-- layout.TRAIN and layout.INFER are the schemas a scenario's `train` and `infer` tables are
-- validated against (omitted sizes are 1); layout.train and layout.infer then check the
-- relations between sizes and derive dp/edp, replicas and stage_layers. GPU ranges of the
-- two sides may overlap (colocated training and inference).

local schema = require("schema")

local layout = {}

-- GPU counts and parallel sizes are at most schema.MAX_GPUS (2^20), checked before any sum
-- or product below, so that none wraps (three of them multiply to less than 2^63).
local function size(default, required)
    return { type = "integer", min = 1, max = schema.MAX_GPUS, default = default,
             required = required }
end

local FIRST_GPU = { type = "integer", min = 0, max = schema.MAX_GPUS - 1, default = 0 }

layout.TRAIN = { type = "record", required = true, fields = {
    gpus = size(nil, true),
    first_gpu = FIRST_GPU,
    tp = size(1), cp = size(1), pp = size(1), ep = size(1), etp = size(1),
    -- Derived from gpus; given only as a cross-check.
    dp = size(),
    fsdp = { type = "boolean", default = false },
    -- Megatron keeps BF16 (or FP32) parameters even when it computes in FP8, so the training
    -- side always sends BF16; FP8 goes on the wire when the inference side is FP8.
    dtype = { type = "string", values = { "bf16" }, default = "bf16",
              hint = "the training side holds BF16 parameters, as Megatron keeps them even "
                  .. "when it computes in FP8; for FP8 weights on the wire set "
                  .. "infer.dtype = 'fp8'" },
    -- Megatron's decoder_first/last_pipeline_num_layers.
    pp_first = size(), pp_last = size(),
    -- Megatron's --use-distributed-optimizer (on in NeMo RL's and Megatron-Bridge's recipes):
    -- Adam's FP32 state sharded over data parallelism (sim/memory.c).
    distributed_optimizer = { type = "boolean", default = true },
    -- State offloaded to the host between steps (verl's param_offload, optimizer_offload):
    -- at the sync the parameters are back in HBM, the gradients (with param_offload) and the
    -- optimizer state are not (sim/memory.c).
    offload_params = { type = "boolean", default = false },
    offload_optimizer = { type = "boolean", default = false },
} }

layout.INFER = { type = "record", required = true, fields = {
    gpus = size(nil, true),
    first_gpu = FIRST_GPU,
    tp = size(1), pp = size(1),
    -- Attention data parallelism inside one engine (vLLM/SGLang DP attention).
    dp = size(1),
    ep = size(1),
    -- Engines: derived from gpus; given only as a cross-check.
    replicas = size(),
    -- The engine's weights: BF16, FP8 (128 x 128 block scales, DeepSeek-V3's checkpoints), or
    -- 4-bit E2M1 two to a byte with block scales along the last dim: MXFP4 (32 values to an
    -- E8M0 scale, the OCP Microscaling Formats (MX) Specification v1.0; gpt-oss's experts)
    -- and NVFP4 (16 to an FP8 E4M3 scale, NVIDIA's Blackwell format). sim/model.h counts them.
    dtype = { type = "string", values = { "bf16", "fp8", "mxfp4", "nvfp4" }, default = "bf16" },
    -- vLLM's gpu_memory_utilization: the engine's share of each GPU (weights, then the KV
    -- cache); SGLang's mem_fraction_static plays the same part.
    gpu_memory_utilization = { type = "number", above = 0, max = 1, default = 0.9 },
    -- How engines sit on the NVLink domains (layout.place): "domain" never splits an engine
    -- across two, leaving GPUs idle where engines do not divide a domain (64-GPU engines in
    -- 72-GPU racks), as real racks are used; "packed" puts them back to back from first_gpu,
    -- a deliberate what-if or engines that do span racks.
    placement = { type = "string", values = { "domain", "packed" }, default = "domain" },
} }

-- Megatron's stage split. With pp_first/pp_last the remaining layers split evenly over the
-- other stages. Without, an even split when possible, else the middle stages take
-- m = ceil(L/pp) and the remainder r = L - m*(pp-2) goes to the first ceil(r/2) and the
-- last floor(r/2) stage: NeMo-RL's DeepSeek-V3 recipes (61 layers: PP16 -> 3, 4 x 14, 2;
-- PP8 -> 7, 6 x 8, 6).
local function train_stages(t, layers, site, prefix)
    local pp, stages = t.pp, {}
    if t.pp_first or t.pp_last then
        local field = prefix .. (t.pp_first and ".pp_first" or ".pp_last")
        if pp < 2 then
            schema.raise(site, field, string.format("needs pp >= 2, got pp = %d", pp))
        end
        local rest = layers - (t.pp_first or 0) - (t.pp_last or 0)
        local others = pp - (t.pp_first and 1 or 0) - (t.pp_last and 1 or 0)
        local even = others == 0 and rest == 0
            or others > 0 and rest >= others and rest % others == 0
        if not even then
            schema.raise(site, field, string.format(
                "the other %d layers do not split evenly over the other %d stages",
                rest, others))
        end
        local m = others > 0 and rest // others or 0
        for s = 1, pp do
            stages[s] = m
        end
        stages[1] = t.pp_first or m
        stages[pp] = t.pp_last or m
        return stages
    end
    if layers % pp == 0 then
        for s = 1, pp do
            stages[s] = layers // pp
        end
        return stages
    end
    local m = (layers + pp - 1) // pp
    local r = layers - m * (pp - 2)
    local first, last = (r + 1) // 2, r // 2
    if r < 0 or first > m or last < 1 then
        schema.raise(site, prefix .. ".pp", string.format(
            "%d layers do not split over %d stages (middle stages of %d layers leave %d); "
            .. "set pp_first and pp_last", layers, pp, m, r))
    end
    for s = 2, pp - 1 do
        stages[s] = m
    end
    stages[1], stages[pp] = first, last
    return stages
end

-- Normalises a validated `train` table for `model`; `prefix` names it in errors.
function layout.train(t, model, site, prefix)
    local function field(name)
        return prefix .. "." .. name
    end
    local tcp = t.tp * t.cp * t.pp
    if t.gpus % tcp ~= 0 then
        schema.raise(site, field("gpus"), string.format(
            "%d is not a multiple of tp*cp*pp = %d", t.gpus, tcp))
    end
    local dp = t.gpus // tcp
    if t.dp and t.dp ~= dp then
        schema.raise(site, field("dp"), string.format(
            "%d does not match gpus/(tp*cp*pp) = %d/%d = %d", t.dp, t.gpus, tcp, dp))
    end
    if model.experts == 0 and t.ep * t.etp > 1 then
        schema.raise(site, field(t.ep > 1 and "ep" or "etp"),
            "the model has no experts, so ep and etp must be 1")
    end
    -- Experts run on an ep x etp x edp mesh over the same ranks as tp x cp x dp.
    local expert_mesh = t.ep * t.etp
    if (t.tp * t.cp * dp) % expert_mesh ~= 0 then
        schema.raise(site, field("ep"), string.format(
            "tp*cp*dp = %d is not a multiple of ep*etp = %d", t.tp * t.cp * dp, expert_mesh))
    end
    -- Megatron asserts num_moe_experts % expert_model_parallel_size == 0.
    if model.experts % t.ep ~= 0 then
        schema.raise(site, field("ep"), string.format(
            "the %d experts do not split evenly over ep = %d", model.experts, t.ep))
    end
    -- Megatron asserts num_attention_heads % tp == 0 and, for GQA, num_query_groups % tp
    -- == 0 (megatron/core/transformer/attention.py, divide()).
    local a = model.attention
    if a.heads % t.tp ~= 0 then
        schema.raise(site, field("tp"), string.format(
            "the model's %d attention heads do not split evenly over tp = %d (Megatron "
            .. "requires heads %% tp == 0)", a.heads, t.tp))
    end
    if a.kind == "gqa" and a.kv_heads % t.tp ~= 0 then
        schema.raise(site, field("tp"), string.format(
            "the model's %d KV heads do not split evenly over tp = %d (Megatron requires "
            .. "kv_heads %% tp == 0)", a.kv_heads, t.tp))
    end
    return {
        gpus = t.gpus, first_gpu = t.first_gpu, tp = t.tp, cp = t.cp, pp = t.pp, dp = dp,
        ep = t.ep, etp = t.etp, edp = t.tp * t.cp * dp // expert_mesh, fsdp = t.fsdp,
        distributed_optimizer = t.distributed_optimizer, dtype = t.dtype,
        offload_params = t.offload_params, offload_optimizer = t.offload_optimizer,
        stage_layers = train_stages(t, model.layers, site, prefix),
    }
end

-- vLLM's get_pp_indices: layers // pp each, the remainder one each to the stages before the
-- last, counting back from the second-last.
local function infer_stages(pp, layers)
    local stages = {}
    for s = 1, pp do
        stages[s] = layers // pp
    end
    for i = 2, layers % pp + 1 do
        stages[pp + 1 - i] = stages[pp + 1 - i] + 1
    end
    return stages
end

-- Normalises a validated `infer` table for `model`; `prefix` names it in errors.
function layout.infer(t, model, site, prefix)
    local function field(name)
        return prefix .. "." .. name
    end
    local engine = t.tp * t.pp * t.dp
    if t.gpus % engine ~= 0 then
        schema.raise(site, field("gpus"), string.format(
            "%d is not a multiple of tp*pp*dp = %d", t.gpus, engine))
    end
    local replicas = t.gpus // engine
    if t.replicas and t.replicas ~= replicas then
        schema.raise(site, field("replicas"), string.format(
            "%d does not match gpus/(tp*pp*dp) = %d/%d = %d", t.replicas, t.gpus, engine,
            replicas))
    end
    -- vLLM's expert parallelism is on or off: when on, experts span the engine's TP x DP.
    if t.ep ~= 1 and t.ep ~= t.tp * t.dp then
        schema.raise(site, field("ep"), string.format(
            "expected 1 or tp*dp = %d (expert parallelism spans the engine's TP x DP ranks), "
            .. "got %d", t.tp * t.dp, t.ep))
    end
    if model.experts == 0 and t.ep > 1 then
        schema.raise(site, field("ep"), "the model has no experts, so ep must be 1")
    end
    if t.pp > model.layers then
        schema.raise(site, field("pp"), string.format(
            "%d stages for %d layers would leave a stage empty", t.pp, model.layers))
    end
    -- vLLM asserts num_attention_heads % tp == 0 and, for GQA, either splits the KV heads
    -- (kv_heads % tp == 0) or replicates them (tp % kv_heads == 0) (vllm/config.py
    -- verify_with_parallel_config; QKVParallelLinear in vllm/model_executor/layers/linear.py).
    -- MLA: the heads rule only.
    local a = model.attention
    if a.heads % t.tp ~= 0 then
        schema.raise(site, field("tp"), string.format(
            "the model's %d attention heads do not split evenly over tp = %d (vLLM requires "
            .. "heads %% tp == 0)", a.heads, t.tp))
    end
    if a.kind == "gqa" and a.kv_heads % t.tp ~= 0 and t.tp % a.kv_heads ~= 0 then
        schema.raise(site, field("tp"), string.format(
            "the model's %d KV heads neither split over nor replicate evenly across tp = %d "
            .. "(vLLM requires kv_heads %% tp == 0 or tp %% kv_heads == 0)", a.kv_heads, t.tp))
    end
    return {
        gpus = t.gpus, first_gpu = t.first_gpu, tp = t.tp, pp = t.pp, dp = t.dp, ep = t.ep,
        replicas = replicas, dtype = t.dtype, gpu_memory_utilization = t.gpu_memory_utilization,
        placement = t.placement, stage_layers = infer_stages(t.pp, model.layers),
    }
end

-- Whether engines of e GPUs, r of them packed back to back from GPU f, split one across
-- two domains of d GPUs: an engine smaller than a domain crossing a boundary, a larger one
-- starting off one. Engine i starts at f + i*e modulo d, which repeats within d engines.
local function packed_splits(e, r, f, d)
    if e > d then
        return f % d ~= 0 or (r > 1 and e % d ~= 0)
    end
    for i = 0, math.min(r, d) - 1 do
        if (f + i * e) % d > d - e then
            return true
        end
    end
    return false
end

-- Where r engines of e GPUs go from GPU f on NVLink domains of d GPUs (d = 0: packed), as
-- sim/layout.c rf_engine_place: { gaps, per_domain, stride, span }, or nil, the field
-- ("first_gpu" or "gpus") and the message when "domain" cannot place them. Packed, or when
-- packing splits no engine, there are no gaps: stride e, span e*r. Otherwise engines of
-- e < d go d // e per domain (stride d), which needs f at a domain boundary and r a
-- multiple of d // e; engines of e > d take ceil(e / d) whole domains each. A pure function
-- (layout.place raises with its answer), for whoever enumerates layouts.
function layout.engine_place(e, r, f, d, prefix)
    prefix = prefix or "infer"
    local packed = { gaps = false, per_domain = 1, stride = e, span = e * r }
    if d == 0 or not packed_splits(e, r, f, d) then
        return packed
    end
    if f % d ~= 0 then
        return nil, "first_gpu", string.format(
            "%d is not at an NVLink domain boundary, so engines of %d GPUs would be split "
            .. "across domains of %d GPUs; start at a multiple of %d (%d), or set "
            .. "%s.placement = 'packed'", f, e, d, d, (f + d - 1) // d * d, prefix)
    end
    if e < d then
        local k = d // e
        if r % k ~= 0 then
            return nil, "gpus", string.format(
                "%d engines of %d GPUs do not fill domains of %d GPUs evenly (%d engines per "
                .. "domain); use a multiple of %d engines (%d GPUs), or set %s.placement = "
                .. "'packed'", r, e, d, k, k, k * e, prefix)
        end
        return { gaps = true, per_domain = k, stride = d, span = (r // k - 1) * d + k * e }
    end
    local stride = (e + d - 1) // d * d
    return { gaps = true, per_domain = 1, stride = stride, span = (r - 1) * stride + e }
end

-- Places the engines of a normalised `infer` side on the NVLink domains of cluster `c`
-- (infer.placement: "domain" against c.nvlink.domain_gpus, or "packed") and adds to it
-- domain_gpus (the domain size placed against; 0 when packed), span (GPUs from first_gpu to
-- the last engine GPU, idle ones included) and per_domain (engines per domain, placed with
-- gaps; else 1). C places them again (rf_engine_place), whoever built the side.
function layout.place(t, c, site, prefix)
    local d = t.placement == "domain" and c.nvlink.domain_gpus or 0
    local p, field, message = layout.engine_place(t.tp * t.pp * t.dp, t.replicas, t.first_gpu,
        d, prefix)
    if not p then
        schema.raise(site, prefix .. "." .. field, message)
    end
    t.domain_gpus, t.span, t.per_domain = d, p.span, p.per_domain
    return t
end

return layout
