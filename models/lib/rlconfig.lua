-- rlconfig.lua: a scenario's sides read from the RL framework's own configuration, NeMo RL's
-- or verl's YAML file (scenario field `sides = { nemo_rl = "x.yaml" }` or `{ verl = ... }`).

-- The YAML is decoded by the refit command's refit.yaml module (sim/yaml_lua.c, libyaml),
-- which returns the document and the line of every dotted key. A real config holds hundreds
-- of keys; only those refit models are read (listed in NEMO_RL and VERL below), every other
-- key is ignored, and a key that is read with a wrong type or value is an error naming the
-- YAML file, its line and the dotted key:
--   dsv3.yaml:42: policy.megatron_cfg.tensor_model_parallel_size: expected a positive
--   integer, got "x"
-- NeMo RL's `defaults: base.yaml` inheritance (nemo_rl/utils/config.py,
-- load_config_with_inheritance: the parent's keys, overridden by the child's) is followed;
-- OmegaConf's `${dotted.key}` references to another key are resolved, any other `${...}`
-- (a resolver such as ${mul:...}) in a key refit reads is an error naming that key.

local schema = require("schema")
local sandbox = require("sandbox")

local rlconfig = {}

-- The scenario's `sides` field: exactly one framework and its file.
rlconfig.SIDES = { type = "record", fields = {
    nemo_rl = { type = "string" },
    verl = { type = "string" },
} }

-- Parents a config may inherit through (a chain longer than NeMo RL's recipes ever use, two
-- or three, is a cycle the lexical check cannot see, through symbolic links).
local MAX_DEFAULTS_DEPTH = 16

local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
end

-- A relative path is taken from base_dir, the directory of the file naming it; from "." it
-- is left as written, so errors name the file as the user wrote it.
local function resolve_path(path, base_dir)
    if path:sub(1, 1) ~= "/" and base_dir ~= "." then
        return base_dir .. "/" .. path
    end
    return path
end

local yaml_ok, yaml = pcall(require, "refit.yaml")
local NULL = yaml_ok and yaml.null or nil

-- How a YAML value is shown after "got": as YAML writes it, strings in double quotes.
local function describe(v)
    if v == NULL then
        return "null"
    elseif type(v) == "string" then
        return string.format('"%s"', v)
    elseif type(v) == "table" then
        return next(v) == nil and "{}" or (v[1] ~= nil and "a list" or "a mapping")
    end
    return schema.describe(v)
end

local function is_mapping(v)
    return type(v) == "table" and v[1] == nil
end

-- Overlays `src` onto `dst` (mappings merge key by key, anything else replaces), and the
-- lines of src onto those of dst: a child's key is reported where the child wrote it. A
-- parent's line left under a path the child replaced is never looked up, since that path
-- no longer exists in the merged document.
local function overlay(dst, src)
    for k, v in pairs(src) do
        if is_mapping(v) and is_mapping(dst[k]) then
            overlay(dst[k], v)
        else
            dst[k] = v
        end
    end
end

-- Reads the YAML file at `path` and its `defaults` parents. Returns the merged document and
-- where[dotted] = { file =, line = }. `site`/`field` name the place that named the file.
local function load(path, site, field, chain)
    if not yaml_ok then
        schema.raise(site, field, "reading " .. path
            .. " needs the YAML decoder of the refit command (module refit.yaml)")
    end
    for _, seen in ipairs(chain) do
        if seen == path then
            schema.raise(site, field, string.format("'%s' inherits from itself (%s -> %s)",
                path, table.concat(chain, " -> "), path))
        end
    end
    if #chain >= MAX_DEFAULTS_DEPTH then
        schema.raise(site, field, string.format("defaults nest deeper than %d files (%s -> ...)",
            MAX_DEFAULTS_DEPTH, chain[1]))
    end
    local doc, lines = yaml.decode(sandbox.read(path, site, field), path)
    if doc == NULL then
        doc = {}
    end
    if not is_mapping(doc) then
        error(string.format("%s:1: expected a mapping of keys at the top, got %s", path,
            describe(doc)), 0)
    end
    local where = {}
    for p, line in pairs(lines) do
        where[p] = { file = path, line = line }
    end
    local parents = doc.defaults
    if parents == nil or parents == NULL then
        doc.defaults = nil
        return doc, where
    end
    doc.defaults = nil
    if type(parents) == "string" then
        parents = { parents }
    end
    local dsite = { file = path, line = lines.defaults or 1, scan = false }
    if type(parents) ~= "table" or is_mapping(parents) then
        schema.raise(dsite, "defaults", "expected a file name or a list of file names, got "
            .. describe(parents))
    end
    local merged, merged_where = {}, {}
    chain[#chain + 1] = path
    for i, parent in ipairs(parents) do
        if type(parent) ~= "string" then
            schema.raise({ file = path, line = lines["defaults." .. i] or dsite.line,
                scan = false }, "defaults." .. i, "expected a file name, got " .. describe(parent))
        end
        -- Later parents override earlier ones, and the file itself overrides them all.
        local d, w = load(resolve_path(parent, dirname(path)), dsite, "defaults", chain)
        overlay(merged, d)
        overlay(merged_where, w)
    end
    chain[#chain] = nil
    overlay(merged, doc)
    overlay(merged_where, where)
    return merged, merged_where
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

-- The value at the dotted `path` (nil when missing, NULL when written as null), with
-- `${other.key}` references followed.
function Config:get(path, seen)
    local v = walk(self.doc, path)
    if type(v) == "string" and v:find("${", 1, true) then
        local ref = v:match("^%${([%w_%-%.]+)}$")
        if not ref or walk(self.doc, ref) == nil then
            self:raise(path, string.format("unresolved interpolation %s (refit follows only "
                .. "${dotted.key} references to another key of the file); write the value",
                describe(v)))
        end
        seen = seen or {}
        if seen[ref] or #seen >= 16 then
            self:raise(path, string.format("%s refers to itself", describe(v)))
        end
        seen[ref], seen[#seen + 1] = true, ref
        return self:get(ref, seen)
    end
    return v
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
        self:raise(path, "expected a positive integer, got " .. describe(v))
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
-- (megatron/core/model_parallel_config.py, __post_init__).
local function megatron_train(cfg, m, origin)
    local t = {
        tp = cfg:positive(m .. "tensor_model_parallel_size", 1),
        pp = cfg:positive(m .. "pipeline_model_parallel_size", 1),
        ep = cfg:positive(m .. "expert_model_parallel_size", 1),
        cp = cfg:positive(m .. "context_parallel_size", 1),
    }
    t.etp = cfg:positive(m .. "expert_tensor_parallel_size", t.tp)
    for field, key in pairs({ tp = "tensor_model_parallel_size",
        pp = "pipeline_model_parallel_size", ep = "expert_model_parallel_size",
        cp = "context_parallel_size", etp = "expert_tensor_parallel_size" }) do
        origin["train." .. field] = m .. key
    end
    return t
end

-- NeMo RL (examples/configs/grpo_math_1B_megatron.yaml and the recipes under
-- examples/configs/recipes/llm/, NVIDIA-NeMo/RL @ 7ea279ab). The generation cluster is
-- split off the end of the cluster when it is not colocated (nemo_rl/algorithms/grpo.py
-- setup: training gets the first cluster.num_nodes - resources.num_nodes nodes, or on one
-- node the first gpus_per_node - resources.gpus_per_node GPUs).
local function nemo_rl(cfg)
    local origin = {}
    local nodes = cfg:positive("cluster.num_nodes")
    local per_node = cfg:positive("cluster.gpus_per_node")
    if not cfg:boolean("policy.megatron_cfg.enabled", false) then
        cfg:raise("policy.megatron_cfg.enabled", "expected true: refit reads the Megatron "
            .. "training layout (policy.megatron_cfg), not DTensor's")
    end
    local train = megatron_train(cfg, "policy.megatron_cfg.", origin)
    train.pp_first = cfg:optional("policy.megatron_cfg.num_layers_in_first_pipeline_stage")
    train.pp_last = cfg:optional("policy.megatron_cfg.num_layers_in_last_pipeline_stage")
    origin["train.pp_first"] = "policy.megatron_cfg.num_layers_in_first_pipeline_stage"
    origin["train.pp_last"] = "policy.megatron_cfg.num_layers_in_last_pipeline_stage"
    train.distributed_optimizer =
        cfg:boolean("policy.megatron_cfg.optimizer.use_distributed_optimizer", true)
    local g = "policy.generation."
    cfg:choice(g .. "backend", { vllm = "vllm" }, nil, "refit reads policy.generation.vllm_cfg")
    local v = g .. "vllm_cfg."
    local infer = {
        tp = cfg:positive(v .. "tensor_parallel_size", 1),
        pp = cfg:positive(v .. "pipeline_parallel_size", 1),
        ep = cfg:positive(v .. "expert_parallel_size", 1),
        gpu_memory_utilization = cfg:fraction(v .. "gpu_memory_utilization", 0.9),
        dtype = cfg:choice(v .. "precision", DTYPES, "bfloat16"),
    }
    origin["infer.tp"], origin["infer.pp"] = v .. "tensor_parallel_size", v .. "pipeline_parallel_size"
    origin["infer.ep"] = v .. "expert_parallel_size"
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
    return {
        train = train, infer = infer, origin = origin, colocated = colocated,
        nodes = nodes, gpus_per_node = per_node, node_keys = { "cluster.num_nodes",
            "cluster.gpus_per_node" },
        model = cfg:get("policy.model_name"), model_key = "policy.model_name",
        framework = "nemo-rl",
    }
end

-- verl (verl/trainer/config/ppo_megatron_trainer.yaml, volcengine/verl @ b178a3cd). The
-- hybrid engine colocates the actor and the rollout on every trainer GPU; the separate
-- rollout pool of the one-step-off and fully-async recipes is the top-level
-- rollout.nnodes x rollout.n_gpus_per_node, placed after the trainer's GPUs.
local function verl(cfg)
    local origin = {}
    local nodes = cfg:positive("trainer.nnodes")
    local per_node = cfg:positive("trainer.n_gpus_per_node")
    cfg:choice("actor_rollout_ref.actor.strategy", { megatron = "megatron" }, nil,
        "refit reads the Megatron training layout (actor_rollout_ref.actor.megatron)")
    local train = megatron_train(cfg, "actor_rollout_ref.actor.megatron.", origin)
    train.distributed_optimizer =
        cfg:boolean("actor_rollout_ref.actor.megatron.use_distributed_optimizer", true)
    local r = "actor_rollout_ref.rollout."
    cfg:choice(r .. "name", { vllm = "vllm", sglang = "sglang" }, nil)
    local infer = {
        tp = cfg:positive(r .. "tensor_model_parallel_size", 1),
        pp = cfg:positive(r .. "pipeline_model_parallel_size", 1),
        dp = cfg:positive(r .. "data_parallel_size", 1),
        ep = cfg:positive(r .. "expert_parallel_size", 1),
        -- verl's default share (rollout.yaml: gpu_memory_utilization: 0.5).
        gpu_memory_utilization = cfg:fraction(r .. "gpu_memory_utilization", 0.5),
    }
    for field, key in pairs({ tp = "tensor_model_parallel_size",
        pp = "pipeline_model_parallel_size", dp = "data_parallel_size",
        ep = "expert_parallel_size" }) do
        origin["infer." .. field] = r .. key
    end
    -- The rollout casts to rollout.dtype; rollout.quantization: fp8 quantises it.
    cfg:choice(r .. "dtype", { bfloat16 = "bf16", bf16 = "bf16" }, "bfloat16",
        "the training side sends BF16 weights")
    local q = cfg:get(r .. "quantization")
    infer.dtype = (q == nil or q == NULL) and "bf16" or cfg:choice(r .. "quantization",
        { fp8 = "fp8" }, nil)
    local total = nodes * per_node
    local colocated = cfg:get("rollout.n_gpus_per_node") == nil
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
    return {
        train = train, infer = infer, origin = origin, colocated = colocated,
        -- The trainer's nodes, and the rollout's when they are a pool of their own.
        nodes = total // per_node, gpus_per_node = per_node,
        node_keys = { "trainer.nnodes", "trainer.n_gpus_per_node" },
        model = cfg:get("actor_rollout_ref.model.path"), model_key = "actor_rollout_ref.model.path",
        framework = "verl",
    }
end

local READERS = { nemo_rl = nemo_rl, verl = verl }

-- Reads the sides of a validated `sides` field (written at `site`), relative to base_dir.
-- Returns { train =, infer =, framework = (the profile preset), colocated =, nodes =,
-- gpus_per_node =, model = (the file's model name or path, if any), config = (the loaded
-- Config), origin = (side field -> the YAML key that decided it), key = "sides.nemo_rl" }.
function rlconfig.sides(spec, site, base_dir)
    local kind, path
    for k, v in pairs(spec) do
        if kind then
            schema.raise(site, "sides", "names both nemo_rl and verl; keep one")
        end
        kind, path = k, v
    end
    if not kind then
        schema.raise(site, "sides", "expected nemo_rl = \"file.yaml\" or verl = \"file.yaml\"")
    end
    local file = resolve_path(path, base_dir or ".")
    local doc, lines = load(file, site, "sides." .. kind, {})
    local cfg = setmetatable({ doc = doc, lines = lines, file = file }, Config)
    local out = READERS[kind](cfg)
    out.config, out.key = cfg, "sides." .. kind
    return out
end

-- Runs fn() and reports a fault it raises at a side field (train.tp, infer.gpus) the YAML
-- decided at that YAML key instead, so the user is sent to the file they wrote; `source` is
-- the scenario's name, the file such errors name.
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
            sides.config:raise(key, string.format("%s (refit's %s)", message, field))
        end
    end
    error(result, 0)
end

return rlconfig
