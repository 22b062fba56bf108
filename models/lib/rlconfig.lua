-- rlconfig.lua: a scenario's sides read from the RL framework's own configuration, NeMo RL's
-- or verl's YAML file (scenario field `sides = { nemo_rl = "x.yaml" }` or `{ verl = ... }`).

-- The YAML is decoded by the refit command's refit.yaml module (sim/yaml_lua.c, libyaml),
-- which returns the document and the line of every dotted key. A real config holds hundreds
-- of keys; only those refit models are read (listed in NEMO_RL and VERL below), every other
-- key is ignored, and a key that is read with a wrong type or value is an error naming the
-- YAML file, its line and the dotted key:
--   dsv3.yaml:42: policy.megatron_cfg.tensor_model_parallel_size: expected a positive
--   integer, got "x"
-- The file is composed first (compose.lua: NeMo RL's `defaults:` inheritance, Hydra's
-- defaults lists and search path, the scenario's `sides.overrides` as the framework's
-- command line). OmegaConf's references are resolved in the keys refit reads: `${a.b}`,
-- relative `${.x}`/`${..x}`, `${oc.select:key,default}`; any other `${...}` (a resolver such
-- as ${mul:...}) in a key refit reads is an error naming that key, and so is a `???`
-- (OmegaConf's mandatory value), which names the override the framework expects.

local schema = require("schema")
local compose = require("compose")

local rlconfig = {}

-- The start of an error that is an answer, not a fault: the config's generation runs on the
-- training weights, so there is no refit to plan. sim/sandbox.c turns it into RF_ENOREFIT
-- and the command prints the rest and exits 0. Keep it equal to RF_NO_REFIT_MARK
-- (sim/error.h).
rlconfig.NO_REFIT = "\31no refit traffic\31"

-- The scenario's `sides` field: exactly one framework and its file.
rlconfig.SIDES = { type = "record", fields = {
    nemo_rl = { type = "string" },
    verl = { type = "string" },
    -- The framework's command-line overrides, as its launch script passes them
    -- ("cluster.num_nodes=4", "actor_rollout_ref.rollout.name=vllm", "~key",
    -- "actor@actor_rollout_ref.actor=megatron_actor").
    overrides = { type = "list", items = { type = "string" }, max_items = 4096 },
} }

local NULL = compose.NULL
local describe = compose.describe

-- A relative path is taken from base_dir, the directory of the file naming it; from "." it
-- is left as written, so errors name the file as the user wrote it.
local function resolve_path(path, base_dir)
    if path:sub(1, 1) ~= "/" and base_dir ~= "." then
        return base_dir .. "/" .. path
    end
    return path
end

-- A loaded config: its document, the lines of its keys and what raises at them.
local Config = {}
Config.__index = Config

-- Where `path` was written: the key itself, or its nearest written parent (a key that is
-- missing, or came in through a `<<` merge, is reported at the mapping that should hold it).
function Config:where(path)
    local p = path
    while p do
        local w = self.lines[p]
        if w then
            return w
        end
        p = p:match("^(.*)%.[^.]*$")
    end
    return { file = self.file, line = 1 }
end

function Config:raise(path, message)
    local w = self:where(path)
    error(string.format("%s:%d: %s: %s", w.file, w.line, path, message), 0)
end

local function walk(doc, path)
    local v = doc
    for part in path:gmatch("[^.]+") do
        if type(v) ~= "table" then
            return nil
        end
        v = v[part]
    end
    return v
end

-- The absolute key an OmegaConf reference `ref` in the value of `path` names: `a.b` as it
-- is; `.x` relative to the mapping holding `path`, each further dot one level up.
local function absolute(ref, path)
    local dots, rest = ref:match("^(%.*)(.*)$")
    if dots == "" then
        return ref
    end
    local base = path:match("^(.*)%.[^.]*$") or ""
    for _ = 2, #dots do
        base = base:match("^(.*)%.[^.]*$") or ""
    end
    if rest == "" then
        return base
    end
    return base == "" and rest or base .. "." .. rest
end

local KEY = "[%w_%-%.]+"

-- The value at the dotted `path` (nil when missing, NULL when written as null), with
-- OmegaConf's references followed. A chain's faults are reported at the key refit reads
-- (`seen[1]`), with the chain that led there.
function Config:get(path, seen)
    local v = walk(self.doc, path)
    if v == "???" then
        self:raise(path, string.format("??? (a value %s expects on its command line); add "
            .. "\"%s=...\" to the scenario's %s.overrides", self.framework, path, self.key))
    end
    if type(v) ~= "string" or not v:find("${", 1, true) then
        return v
    end
    local ref = v:match("^%${(" .. KEY .. ")}$")
    local select_ref, default = v:match("^%${oc%.select:(" .. KEY .. "),%s*(.-)}$")
    if not select_ref then
        select_ref = v:match("^%${oc%.select:(" .. KEY .. ")}$")
    end
    local target = ref and absolute(ref, path) or select_ref and absolute(select_ref, path)
    if select_ref and walk(self.doc, target) == nil then
        -- oc.select's default, read as YAML reads a value (null when none is given).
        local ok, d = pcall(require("refit.yaml").decode, "v: " .. (default or "null"))
        return ok and compose.is_mapping(d) and (d.v == nil and NULL or d.v) or default
    end
    if not target or walk(self.doc, target) == nil then
        self:raise(path, string.format("unresolved interpolation %s (refit follows "
            .. "${dotted.key}, ${..relative.key} and ${oc.select:key,default}); write the "
            .. "value", describe(v)))
    end
    seen = seen or { [path] = true, path }
    if seen[target] then
        seen[#seen + 1] = target
        self:raise(seen[1], string.format("%s: its references come back to %s (%s)",
            describe(walk(self.doc, seen[1])), target, table.concat(seen, " -> ")))
    elseif #seen > 64 then
        self:raise(seen[1], string.format("%s: a chain of more than 64 references (%s -> "
            .. "... -> %s); write the value", describe(walk(self.doc, seen[1])), seen[2],
            seen[#seen]))
    end
    seen[target], seen[#seen + 1] = true, target
    return self:get(target, seen)
end

-- A parallel size or a count: a positive integer (at most schema.MAX_GPUS, as layout.lua
-- bounds them). Missing or null gives `default`; without one, missing is an error.
function Config:positive(path, default)
    local v = self:get(path)
    if v == nil or v == NULL then
        if default == nil then
            self:raise(path, "missing (refit needs it to place the sides)")
        end
        return default
    end
    if math.type(v) ~= "integer" or v < 1 or v > schema.MAX_GPUS then
        self:raise(path, string.format("expected an integer from 1 to %d, got %s",
            schema.MAX_GPUS, describe(v)))
    end
    return v
end

-- An optional positive integer: nil when missing or null.
function Config:optional(path)
    local v = self:get(path)
    if v == nil or v == NULL then
        return nil
    end
    return self:positive(path)
end

function Config:boolean(path, default)
    local v = self:get(path)
    if v == nil or v == NULL then
        return default
    end
    if type(v) ~= "boolean" then
        self:raise(path, "expected true or false, got " .. describe(v))
    end
    return v
end

-- A fraction of a GPU's memory, in (0, 1].
function Config:fraction(path, default)
    local v = self:get(path)
    if v == nil or v == NULL then
        return default
    end
    if type(v) ~= "number" or not (v > 0 and v <= 1) then
        self:raise(path, "expected a number above 0 and at most 1, got " .. describe(v))
    end
    return v
end

-- One of `values` (a map of what the file writes to what refit calls it); missing or null
-- gives `default` (nil: an error).
function Config:choice(path, values, default, why)
    local v = self:get(path)
    if v == nil or v == NULL then
        if default == nil then
            self:raise(path, "missing" .. (why and " (" .. why .. ")" or ""))
        end
        v = default
    end
    if type(v) ~= "string" or values[v] == nil then
        local names = {}
        for name in pairs(values) do
            names[#names + 1] = string.format('"%s"', name)
        end
        table.sort(names)
        self:raise(path, string.format("expected %s, got %s%s", table.concat(names, " or "),
            describe(v), why and "; " .. why or ""))
    end
    return values[v]
end

local DTYPES = { bfloat16 = "bf16", bf16 = "bf16", fp8 = "fp8" }

-- Megatron's expert_tensor_parallel_size: None means the training TP
-- (megatron/core/model_parallel_config.py, __post_init__); for a dense model it means
-- nothing, so it is left to scenario.lua (etp_follows_tp), which knows the model.
local function megatron_train(cfg, m, origin, out)
    local t = {
        tp = cfg:positive(m .. "tensor_model_parallel_size", 1),
        pp = cfg:positive(m .. "pipeline_model_parallel_size", 1),
        ep = cfg:positive(m .. "expert_model_parallel_size", 1),
        cp = cfg:positive(m .. "context_parallel_size", 1),
    }
    t.etp = cfg:optional(m .. "expert_tensor_parallel_size")
    if t.etp == nil then
        t.etp, out.etp_follows_tp = t.tp, true
    end
    for field, key in pairs({ tp = "tensor_model_parallel_size",
        pp = "pipeline_model_parallel_size", ep = "expert_model_parallel_size",
        cp = "context_parallel_size", etp = "expert_tensor_parallel_size" }) do
        origin["train." .. field] = m .. key
    end
    return t
end

-- FSDP2 over a DTensor mesh (NeMo RL's DTensor policy, nemo_rl/models/policy/workers/
-- dtensor_policy_worker_v2.py: a (dp, cp, tp) mesh, FSDP sharding over the flattened dp x cp
-- ranks, TP innermost). refit's FSDP shards over its dp, so the context-parallel ranks join
-- it (cp = 1, dp = gpus / tp): the same shards on the same GPUs. Sequence parallelism splits
-- activations only.
local function dtensor_train(cfg, d, origin)
    local t = { tp = cfg:positive(d .. "tensor_parallel_size", 1), cp = 1, pp = 1,
        fsdp = true }
    cfg:positive(d .. "context_parallel_size", 1)
    origin["train.tp"] = d .. "tensor_parallel_size"
    return t
end

-- vLLM's sizes in NeMo RL: with expert_parallel_size above tensor_parallel_size, NeMo RL
-- runs data-parallel attention inside one engine, ep / tp ranks of it (vLLM's EP = DP x TP;
-- nemo_rl/models/generation/vllm/vllm_generation.py, __init__: vllm_dp_size = ep_size //
-- tp_size, asserting ep % tp == 0 when ep > 1).
local function nemo_rl_vllm(cfg, v, infer, origin)
    infer.tp = cfg:positive(v .. "tensor_parallel_size", 1)
    infer.pp = cfg:positive(v .. "pipeline_parallel_size", 1)
    local ep = cfg:positive(v .. "expert_parallel_size", 1)
    if ep > 1 and ep % infer.tp ~= 0 then
        cfg:raise(v .. "expert_parallel_size", string.format("%d is not a multiple of "
            .. "tensor_parallel_size %d (NeMo RL requires it: vLLM's EP = DP x TP)", ep,
            infer.tp))
    end
    infer.ep = ep
    infer.dp = ep > infer.tp and ep // infer.tp or 1
    infer.gpu_memory_utilization = cfg:fraction(v .. "gpu_memory_utilization", 0.9)
    infer.dtype = cfg:choice(v .. "precision", DTYPES, "bfloat16")
    origin["infer.tp"], origin["infer.pp"] = v .. "tensor_parallel_size",
        v .. "pipeline_parallel_size"
    origin["infer.gpu_memory_utilization"] = v .. "gpu_memory_utilization"
    origin["infer.ep"], origin["infer.dp"] = v .. "expert_parallel_size",
        v .. "expert_parallel_size"
end

-- SGLang's sizes in NeMo RL (policy.generation.sglang_cfg, examples/configs/
-- grpo_math_1B_sglang.yaml): an engine of tp_size x pp_size GPUs; SGLang's expert
-- parallelism spans its TP ranks (ep_size 1 or tp_size). dp_size counts engines, which
-- refit derives from the GPUs.
local function nemo_rl_sglang(cfg, v, infer, origin)
    infer.tp = cfg:positive(v .. "tp_size", 1)
    infer.pp = cfg:positive(v .. "pp_size", 1)
    local ep = cfg:positive(v .. "ep_size", 1)
    if ep ~= 1 and ep ~= infer.tp then
        cfg:raise(v .. "ep_size", string.format("expected 1 or tp_size %d (SGLang's expert "
            .. "parallelism spans the engine's TP ranks), got %d", infer.tp, ep))
    end
    infer.ep = ep
    infer.gpu_memory_utilization = cfg:fraction(v .. "mem_fraction_static", 0.9)
    infer.dtype = cfg:choice(v .. "dtype", DTYPES, "bfloat16")
    origin["infer.tp"], origin["infer.pp"], origin["infer.ep"] = v .. "tp_size",
        v .. "pp_size", v .. "ep_size"
    origin["infer.gpu_memory_utilization"] = v .. "mem_fraction_static"
end

-- The cluster's node count: the file's key, else the scenario's cluster.nodes (`hints`),
-- which is where a recipe that leaves it to the launcher gets it.
local function nodes_of(cfg, key, hints)
    local v = cfg:get(key)
    if (v == nil or v == NULL) and hints.nodes then
        return hints.nodes
    end
    if v == nil or v == NULL then
        cfg:raise(key, string.format("missing (the launcher sets it); set the scenario's "
            .. "cluster = { system = ..., nodes = N }, or add \"%s=N\" to its "
            .. "sides.overrides", key))
    end
    return cfg:positive(key)
end

-- NeMo RL (examples/configs/grpo_math_1B.yaml, grpo_math_1B_megatron.yaml and the recipes
-- under examples/configs/recipes/llm/, NVIDIA-NeMo/RL @ 7ea279ab). The generation cluster is
-- split off the end of the cluster when it is not colocated (nemo_rl/algorithms/grpo.py
-- setup: training gets the first cluster.num_nodes - resources.num_nodes nodes, or on one
-- node the first gpus_per_node - resources.gpus_per_node GPUs).
local function nemo_rl(cfg, hints)
    local origin, out = {}, {}
    local nodes = nodes_of(cfg, "cluster.num_nodes", hints)
    local per_node = cfg:positive("cluster.gpus_per_node")
    local g = "policy.generation."
    local backend = cfg:choice(g .. "backend", { vllm = "vllm", sglang = "sglang",
        megatron = "megatron" }, nil, "refit models vLLM's and SGLang's weight loading, not "
        .. "TensorRT-LLM's or Dynamo's; to plan the sizes as a vLLM engine's, add "
        .. "\"policy.generation.backend=vllm\" and the vllm_cfg sizes to sides.overrides")
    if backend == "megatron" then
        -- nemo_rl/models/generation/megatron: generation runs the policy's own Megatron
        -- model, so no weights move between a trainer and an engine.
        local w = cfg:where(g .. "backend")
        error(rlconfig.NO_REFIT .. string.format("%s:%d: %s: megatron: generation runs on the "
            .. "training weights themselves (colocated on the training weights): no refit "
            .. "traffic, nothing to plan", w.file, w.line, g .. "backend"), 0)
    end
    local train
    if cfg:boolean("policy.megatron_cfg.enabled", false) then
        train = megatron_train(cfg, "policy.megatron_cfg.", origin, out)
        train.pp_first = cfg:optional("policy.megatron_cfg.num_layers_in_first_pipeline_stage")
        train.pp_last = cfg:optional("policy.megatron_cfg.num_layers_in_last_pipeline_stage")
        origin["train.pp_first"] = "policy.megatron_cfg.num_layers_in_first_pipeline_stage"
        origin["train.pp_last"] = "policy.megatron_cfg.num_layers_in_last_pipeline_stage"
        train.distributed_optimizer =
            cfg:boolean("policy.megatron_cfg.optimizer.use_distributed_optimizer", true)
    elseif cfg:boolean("policy.dtensor_cfg.enabled", false) then
        train = dtensor_train(cfg, "policy.dtensor_cfg.", origin)
    else
        cfg:raise("policy.dtensor_cfg.enabled", "neither policy.megatron_cfg.enabled nor "
            .. "policy.dtensor_cfg.enabled is true; refit reads the training layout of the "
            .. "enabled one")
    end
    -- Ray places the engines' GPUs in topology order, back to back (nemo_rl/distributed/
    -- virtual_cluster.py, get_reordered_bundle), unless cluster.segment_size asks for whole
    -- NVLink-domain segments of that many nodes, which engines then never straddle: the
    -- segments are the domains refit places against (out.segment_gpus, scenario.lua).
    local segment = cfg:optional("cluster.segment_size")
    local infer = { placement = segment and "domain" or "packed" }
    out.segment_gpus = segment and segment * per_node
    origin["infer.placement"] = segment and "cluster.segment_size" or nil
    if backend == "sglang" then
        nemo_rl_sglang(cfg, g .. "sglang_cfg.", infer, origin)
    else
        nemo_rl_vllm(cfg, g .. "vllm_cfg.", infer, origin)
    end
    local total = nodes * per_node
    -- NeMo RL's default is colocated (grpo_math_1B.yaml: colocated.enabled: true).
    local colocated = cfg:boolean(g .. "colocated.enabled", true)
    if colocated then
        train.gpus, train.first_gpu = total, 0
        infer.gpus, infer.first_gpu = total, 0
        origin["train.gpus"], origin["infer.gpus"] = "cluster.num_nodes", "cluster.num_nodes"
    else
        local r = g .. "colocated.resources."
        local gen
        if nodes == 1 then
            gen = cfg:positive(r .. "gpus_per_node")
            origin["infer.gpus"] = r .. "gpus_per_node"
        else
            gen = cfg:positive(r .. "num_nodes") * per_node
            origin["infer.gpus"] = r .. "num_nodes"
        end
        if gen >= total then
            cfg:raise(origin["infer.gpus"], string.format("the generation's %d GPUs leave none "
                .. "of the cluster's %d for training", gen, total))
        end
        train.gpus, train.first_gpu = total - gen, 0
        infer.gpus, infer.first_gpu = gen, total - gen
        origin["train.gpus"] = origin["infer.gpus"]
    end
    origin["infer.first_gpu"] = origin["infer.gpus"]
    out.train, out.infer, out.origin, out.colocated = train, infer, origin, colocated
    out.nodes, out.gpus_per_node = nodes, per_node
    out.node_keys = { "cluster.num_nodes", "cluster.gpus_per_node" }
    out.model, out.model_key, out.framework = cfg:get("policy.model_name"), "policy.model_name",
        "nemo-rl"
    return out
end

-- verl's FSDP actor (actor_rollout_ref.actor.strategy fsdp or fsdp2; verl/trainer/config/
-- engine/fsdp.yaml): every parameter sharded over all the trainer's GPUs (fsdp_size -1).
-- fsdp_size N < GPUs is HSDP: shards within groups of N, replicated across them, a mesh
-- refit's layouts do not hold.
local function verl_fsdp(cfg, a, gpus, origin)
    local f = a .. "fsdp_config."
    local size = cfg:get(f .. "fsdp_size")
    if size ~= nil and size ~= NULL and size ~= -1 and size ~= gpus then
        cfg:raise(f .. "fsdp_size", string.format("%s shards within groups of that many of "
            .. "the %d GPUs (HSDP), which refit does not model; use -1 (every GPU)",
            describe(size), gpus))
    end
    return { tp = 1, cp = 1, pp = 1, fsdp = true }, f
end

-- verl (verl/trainer/config/ppo_trainer.yaml and ppo_megatron_trainer.yaml, volcengine/verl @
-- b178a3cd). The hybrid engine colocates the actor and the rollout on every trainer GPU;
-- the separate rollout pool of the one-step-off and fully-async recipes is the top-level
-- rollout.nnodes x rollout.n_gpus_per_node, placed after the trainer's GPUs.
local function verl(cfg, hints)
    local origin, out = {}, {}
    local nodes = nodes_of(cfg, "trainer.nnodes", hints)
    local per_node = cfg:positive("trainer.n_gpus_per_node")
    local a = "actor_rollout_ref.actor."
    local strategy = cfg:choice(a .. "strategy", { megatron = "megatron", fsdp = "fsdp",
        fsdp2 = "fsdp" }, nil)
    local total = nodes * per_node
    local train, offload
    if strategy == "megatron" then
        train = megatron_train(cfg, a .. "megatron.", origin, out)
        train.distributed_optimizer = cfg:boolean(a .. "megatron.use_distributed_optimizer", true)
        offload = a .. "megatron."
    else
        train, offload = verl_fsdp(cfg, a, total, origin)
    end
    -- Offloaded to the host between steps. At the sync the parameters come back (verl/workers/
    -- megatron_workers.py and fsdp_workers.py, rollout_mode: load_megatron_model_to_gpu(...,
    -- load_grad=False), load_fsdp_model_to_gpu), gradients and optimizer state do not.
    train.offload_params = cfg:boolean(offload .. "param_offload", false)
    train.offload_optimizer = cfg:boolean(offload .. "optimizer_offload", false)
    local r = "actor_rollout_ref.rollout."
    cfg:choice(r .. "name", { vllm = "vllm", sglang = "sglang" }, nil)
    local infer = {
        -- Ray's resource pools take each node's GPUs in order (verl/single_controller/ray/
        -- base.py, RayResourcePool): engines back to back.
        placement = "packed",
        tp = cfg:positive(r .. "tensor_model_parallel_size", 1),
        pp = cfg:positive(r .. "pipeline_model_parallel_size", 1),
        dp = cfg:positive(r .. "data_parallel_size", 1),
        ep = cfg:positive(r .. "expert_parallel_size", 1),
        -- verl's default share (rollout.yaml: gpu_memory_utilization: 0.5).
        gpu_memory_utilization = cfg:fraction(r .. "gpu_memory_utilization", 0.5),
    }
    for field, key in pairs({ tp = "tensor_model_parallel_size",
        pp = "pipeline_model_parallel_size", dp = "data_parallel_size",
        ep = "expert_parallel_size", gpu_memory_utilization = "gpu_memory_utilization" }) do
        origin["infer." .. field] = r .. key
    end
    -- The rollout casts to rollout.dtype; rollout.quantization: fp8 quantises it.
    cfg:choice(r .. "dtype", { bfloat16 = "bf16", bf16 = "bf16" }, "bfloat16",
        "the training side sends BF16 weights")
    local q = cfg:get(r .. "quantization")
    infer.dtype = (q == nil or q == NULL) and "bf16" or cfg:choice(r .. "quantization",
        { fp8 = "fp8" }, nil)
    local colocated = cfg:get("rollout.n_gpus_per_node") == nil
        or cfg:get("rollout.n_gpus_per_node") == NULL
    train.gpus, train.first_gpu = total, 0
    origin["train.gpus"] = "trainer.nnodes"
    if colocated then
        infer.gpus, infer.first_gpu = total, 0
        origin["infer.gpus"] = "trainer.nnodes"
    else
        infer.gpus = cfg:positive("rollout.nnodes", 1) * cfg:positive("rollout.n_gpus_per_node")
        infer.first_gpu = total
        origin["infer.gpus"] = "rollout.nnodes"
        total = total + infer.gpus
    end
    origin["infer.first_gpu"] = origin["infer.gpus"]
    out.train, out.infer, out.origin, out.colocated = train, infer, origin, colocated
    -- The trainer's nodes, and the rollout's when they are a pool of their own.
    out.nodes, out.gpus_per_node = total // per_node, per_node
    out.node_keys = { "trainer.nnodes", "trainer.n_gpus_per_node" }
    out.model, out.model_key, out.framework = cfg:get("actor_rollout_ref.model.path"),
        "actor_rollout_ref.model.path", "verl"
    return out
end

local READERS = { nemo_rl = nemo_rl, verl = verl }

-- Reads the sides of a validated `sides` field (written at `site`), relative to base_dir.
-- Returns { train =, infer =, framework = (the profile preset), colocated =, nodes =,
-- gpus_per_node =, model = (the file's model name or path, if any), config = (the loaded
-- Config), origin = (side field -> the YAML key that decided it), key = "sides.nemo_rl" }.
function rlconfig.sides(spec, site, base_dir, hints)
    local kind, path
    local overrides = spec.overrides
    for k, v in pairs(spec) do
        if k == "overrides" then
            goto continue
        end
        if kind then
            schema.raise(site, "sides", "names both nemo_rl and verl; keep one")
        end
        kind, path = k, v
        ::continue::
    end
    if not kind then
        schema.raise(site, "sides", "expected nemo_rl = \"file.yaml\" or verl = \"file.yaml\"")
    end
    local file = resolve_path(path, base_dir or ".")
    local doc, lines = compose.load(file, site, "sides." .. kind, overrides, site,
        "sides.overrides")
    local cfg = setmetatable({ doc = doc, lines = lines, file = file, key = "sides",
        framework = kind == "verl" and "verl" or "NeMo RL" }, Config)
    local out = READERS[kind](cfg, hints or {})
    out.config, out.key = cfg, "sides." .. kind
    return out
end

-- Runs fn() and reports a fault it raises at a side field (train.tp, infer.gpus) the YAML
-- decided at that YAML key instead, so the user is sent to the file they wrote; `source` is
-- the scenario's name, the file such errors name. The field comes first: its value may not
-- be the key's (infer.gpus = 16 from trainer.nnodes: 2).
function rlconfig.at_yaml(sides, source, fn, ...)
    local ok, result = pcall(fn, ...)
    if ok then
        return result
    end
    local prefix = source .. ":"
    if type(result) == "string" and result:sub(1, #prefix) == prefix then
        local field, message = result:sub(#prefix + 1):match("^%d+: ([%w_%.]+): (.*)$")
        local key = field and sides.origin[field]
        if key then
            sides.config:raise(key, string.format("refit's %s: %s", field, message))
        end
    end
    error(result, 0)
end

return rlconfig
