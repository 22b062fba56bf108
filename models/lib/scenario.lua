-- scenario.lua: load a scenario file (model, cluster, train and infer layouts, strategy,
-- optional per-tensor policy) and normalise it into the table the C side reads.

local schema = require("schema")
local sandbox = require("sandbox")
local layout = require("layout")
local policy = require("policy")
local cluster = require("cluster")
local framework = require("framework")

local SCENARIO_STRATEGIES = {}
for i, name in ipairs(policy.strategies) do
    SCENARIO_STRATEGIES[i] = name
end
SCENARIO_STRATEGIES[#SCENARIO_STRATEGIES + 1] = "p2p"
local rlconfig = require("rlconfig")
local file = require("file")
local update = require("update")

local scenario = {}

local SCENARIO = { type = "record", fields = {
    -- A name in models/, a path to a .lua model or a config.json, or a built model.
    model = { type = { "string", "table" }, required = true },
    -- A preset name or cluster file, the number of nodes and overrides (cluster.lua).
    cluster = cluster.SPEC,
    train = layout.TRAIN,
    infer = layout.INFER,
    -- The sides read from the RL framework's own config instead of train and infer:
    -- { nemo_rl = "recipe.yaml" } or { verl = "ppo.yaml" } (rlconfig.lua).
    sides = rlconfig.SIDES,
    -- What the refit moves: the full weights (the default) or LoRA adapters (update.lua).
    update = update.SPEC,
    -- Refit that overlaps generation (sim/overlap.h): engines = "all" refits every engine
    -- at once while they keep generating on the old weights, which land beside them (a
    -- whole copy, granularity "model", or a layer at a time, "layer") and are applied in a
    -- stall; "rolling" takes one engine at a time out of generation and refits it in place.
    -- generation_gbps: generation's own traffic on each inference GPU's NVLink and NIC
    -- ports while it runs (GB/s each way, 0: none given), which the refit shares.
    overlap = { type = "record", fields = {
        with = { type = "string", values = { "generation" }, default = "generation" },
        engines = { type = "string", values = { "all", "rolling" }, default = "all" },
        granularity = { type = "string", values = { "model", "layer" }, default = "model" },
        generation_gbps = { type = "number", min = 0, max = 1e6, default = 0 },
    } },
    -- refit's strategies, and "p2p": a framework profile's point-to-point path.
    strategy = { type = "string", values = SCENARIO_STRATEGIES, default = "reshard" },
    -- function(tensor) -> "reshard" | "broadcast"; consulted by the hybrid strategy only,
    -- so a scenario can switch strategies without removing it.
    policy = { type = "function" },
    -- Per-GPU staging memory of one round (bucket), in MB (1e6 bytes). Default: 2% of the
    -- cluster's GPU memory, at most 5 GiB (see staging_bytes below). The staging of every
    -- stream in flight must fit in the GPU's memory (check_staging); 1e9 MB is the most
    -- memory a GPU may have (schema.MAX_GB), so the bytes stay exact.
    staging_mb = { type = "integer", min = 1, max = math.tointeger(schema.MAX_GB * 1000) },
    -- The bulk part of hybrid: reshard, or hierarchical (a leader per NVLink domain).
    hybrid_bulk = { type = "string", values = { "reshard", "hierarchical" }, default = "reshard" },
    -- Replicated sources: balanced (least loaded) or local (nearest first, then least loaded).
    sources = { type = "string", values = policy.sources, default = "balanced" },
    -- A relay's pipeline chunk in KiB: what a relay receives before it forwards it (the
    -- executor's step in a round that relays; the simulator's fill per hop). Default 4096
    -- (sim/schedule.h says why); at most the staging buffer, which caps it.
    chunk_kib = { type = "integer", min = 1, max = 1024 * 1024 * 1024 },
    -- hierarchical's relays between destination NVLink domains (M2N's ring). ring: the
    -- domain leaders of a box forward it leader to leader (true, the default) instead of
    -- each being fed by a source; fanout: each leader forwards to this many (1: a chain
    -- around the ring of domains, as M2N does; 2 or more: a tree, shallower but each
    -- leader sends more); depth: at most this many leader-to-leader hops from the leader
    -- a source feeds (0: no limit), more sources feed the box the lower it is.
    -- A layout that does not fit in the GPUs' memory (sim/memory.c) is refused; true plans
    -- it anyway, with a warning and the run marked overcommitted (a what-if).
    allow_overcommit = { type = "boolean", default = false },
    -- How an RL framework runs the step (framework.lua): a preset name, a profile file, or
    -- { profile = ..., overrides }. Absent: no profile, the plan refit would run itself.
    framework = { type = { "string", "table" } },
    -- Which refit of a job the step is: "steady" (every one after the first, the default)
    -- or "first", which also pays what the framework sets up once (memory registered with
    -- the NIC). Only a framework profile has such costs.
    refit = { type = "string", values = { "steady", "first" }, default = "steady" },
    relay = { type = "record", fields = {
        ring = { type = "boolean", default = true },
        fanout = { type = "integer", min = 1, max = 64, default = 1 },
        depth = { type = "integer", min = 0, max = schema.MAX_GPUS, default = 0 },
    } },
} }

-- The profile's path this run takes (its bucket and buffers): the colocated one on colocated
-- sides, the point-to-point one under strategy p2p, else the broadcast one; nil without.
local function profile_path(profile)
    if not profile then
        return nil
    end
    if profile.colocated_run then
        return profile.colocated, "colocated"
    elseif profile.p2p_run then
        return profile.p2p, "p2p"
    end
    return profile.broadcast, "broadcast"
end

-- NeMo-RL's refit buckets: 2% of GPU memory, at most 5 GiB (nemo_rl/utils/packed_tensor.py),
-- and at least one byte (a GPU of a few bytes is a test, not a reason to fail).
-- Under a framework profile, the bucket of the path it takes (profile_path): the rounds are
-- the framework's buckets. Also returns the profile's bucket field the size came from (nil:
-- staging_mb or the default), which check_staging's message names.
local MIN_BUCKET = 1024 * 1024 -- a bucket's least mib (framework.lua), for the fraction too
local function staging_bytes(mb, c, profile, site)
    if mb then
        return mb * 1000000
    end
    local path, name = profile_path(profile)
    local b = path and path.bucket
    if b and b.hbm_fraction > 0 then
        -- The fraction is checked as the size it makes: 1e-11 of 80 GB is one byte, and a
        -- refit staged a byte at a time is no framework's.
        local field = "framework." .. name .. ".bucket.hbm_fraction"
        local bytes = b.hbm_fraction * c.hbm_gb * 1e9
        if bytes < MIN_BUCKET then
            schema.raise(site, field, string.format("%.4g of the GPU's %.4g GB is %.4g bytes, "
                .. "less than a bucket's least 1 MiB (as bucket.mib)", b.hbm_fraction, c.hbm_gb,
                bytes))
        end
        return math.min(math.floor(bytes), b.max_mib * 1024 * 1024), field
    elseif b and b.mib > 0 then
        return b.mib * 1024 * 1024, "framework." .. name .. ".bucket.mib"
    end
    return math.max(1, math.min(math.floor(0.02 * c.hbm_gb * 1e9), 5 * 1024 * 1024 * 1024))
end

-- Each of the `streams` rounds in flight holds its staging buffer on every GPU, so their sum
-- must fit in the GPU's memory: staging_mb * 1e6 * streams <= hbm_gb * 1e9.
local function check_staging(bytes, given, c, site, bucket)
    local streams = c.calibration.streams
    local need = bytes * 1.0 * streams
    -- Both sides stage: a mixed cluster's smaller GPU memory holds it.
    local hbm = c.upper and math.min(c.hbm_gb, c.upper.hbm_gb) or c.hbm_gb
    if need <= hbm * 1e9 then
        return
    end
    if given then
        schema.raise(site, "staging_mb", string.format(
            "%d MB x %d streams = %.4g GB of staging does not fit in the GPU's %.4g GB of HBM "
            .. "(staging_mb * 1e6 * calibration.streams <= hbm_gb * 1e9)", given, streams,
            need / 1e9, hbm))
    end
    if bucket then
        schema.raise(site, bucket, string.format(
            "%d buffers x %.4g GB of bucket = %.4g GB of staging do not fit in the GPU's %.4g "
            .. "GB of HBM; set staging_mb or calibration.streams", streams, bytes / 1e9,
            need / 1e9, hbm))
    end
    schema.raise(site, "cluster.calibration.streams", string.format(
        "%d streams x %.4g GB of default staging (2%% of hbm_gb, at most 5 GiB) = %.4g GB do "
        .. "not fit in the GPU's %.4g GB of HBM; lower streams or set staging_mb", streams,
        bytes / 1e9, need / 1e9, hbm))
end

local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
end

-- What a policy may answer, as a set and as the text of the error message.
local allowed, quoted = {}, {}
for i, answer in ipairs(policy.per_tensor) do
    allowed[answer], quoted[i] = true, string.format("'%s'", answer)
end
local allowed_text = table.concat(quoted, " or ")

-- The strategy of every tensor, in model order. Policies get a copy of the tensor, so
-- they cannot alter the model.
local function tensor_strategies(s, model, site, bulk)
    local out = {}
    for i, t in ipairs(model.tensors) do
        if s.strategy == "hybrid" then
            local view = {}
            for k, v in pairs(t) do
                view[k] = v
            end
            view.shape = table.move(t.shape, 1, #t.shape, 1, {})
            local answer = (s.policy or policy.default)(view)
            if not allowed[answer] then
                schema.raise(site, "policy", string.format("returned %s for %s; expected %s",
                    schema.describe(answer), t.name, allowed_text))
            end
            out[i] = answer == "reshard" and bulk or answer
        elseif s.strategy == "auto" then
            out[i] = "reshard" -- auto chooses in C; this is only a placeholder
        else
            out[i] = s.strategy
        end
    end
    return out
end

-- Runs the scenario file at `path` in the sandbox and returns the table it builds, before
-- any validation (studies modify it and normalise it later). A file that cannot be read is
-- reported at `site` as `field` (default: the path itself, as "scenario").
function scenario.read(path, context, site, field)
    local raw = sandbox.run(path, context.globals,
        site or { file = path, line = 0, scan = false }, field or "scenario")
    if type(raw) ~= "table" then
        schema.raise({ file = path }, "return",
            "expected the file to return a scenario table, got " .. schema.describe(raw))
    end
    return raw
end

-- Hugging Face suffixes that name a fine-tune, a precision or a release date of the same
-- architecture (meta-llama/Llama-3.1-8B-Instruct, Qwen/Qwen3-8B-Base,
-- deepseek-ai/DeepSeek-V3-0324, Qwen/Qwen3-235B-A22B-Instruct-2507): the weights have the
-- shipped model's tensors.
local ALIAS_SUFFIXES = { "%-instruct$", "%-base$", "%-chat$", "%-it$", "%-bf16$", "%-fp8$",
    "%-thinking$", "%-%d%d%d%d$" }

-- The models/ names a Hugging Face model name may ship under, nearest first: the name
-- itself, then with the suffixes above dropped one by one, then Llama 3.x spelt as refit's
-- llama3 (Llama 3.1's 8B/70B/405B have Llama 3's tensors; only RoPE scaling differs,
-- meta-llama/Llama-3.1-8B config.json).
local function alias_names(name)
    local out, seen = {}, {}
    local function add(n)
        if not seen[n] then
            out[#out + 1], seen[n] = n, true
        end
        local llama = n:match("^llama%-3%.%d+%-(.+)$") or n:match("^meta%-llama%-3%.?%d*%-(.+)$")
        if llama and not seen["llama3-" .. llama] then
            out[#out + 1], seen["llama3-" .. llama] = "llama3-" .. llama, true
        end
    end
    add(name)
    local cur, changed = name, true
    while changed do
        changed = false
        for _, suffix in ipairs(ALIAS_SUFFIXES) do
            local shorter = cur:gsub(suffix, "")
            if shorter ~= cur and shorter ~= "" then
                cur, changed = shorter, true
                add(cur)
            end
        end
    end
    return out
end

-- The scenario's model from the config's model name or path: a folder holding config.json
-- (absolute, or from the scenario's folder) is read as a Hugging Face snapshot; a name is a
-- shipped model of that name, else the Hugging Face cache's download of that id
-- (context.hf_cache/models--org--name, what the framework itself loaded), else a shipped
-- model under one of its alias_names.
local function sides_model(sides, base_dir, context)
    local m = sides.model
    if type(m) ~= "string" then
        sides.config:raise(sides.model_key, "expected a model name or path, got "
            .. schema.describe(m))
    end
    local path = m:sub(1, 1) == "/" and m or (base_dir or ".") .. "/" .. m
    if m:find("/") and file.kind(path) == "dir" then
        return m
    end
    local name = m:gsub("/+$", ""):match("([^/]*)$"):lower()
    local tried = alias_names(name)
    local function shipped(n)
        return n ~= "" and file.read(context.models_dir .. "/" .. n .. ".lua") ~= nil
    end
    if shipped(name) then
        return name
    end
    local org, repo = m:match("^([%w_%.%-]+)/([%w_%.%-]+)$")
    local cached = org and context.hf_cache and string.format("%s/models--%s--%s",
        context.hf_cache, org, repo)
    if cached and file.kind(cached) == "dir" then
        return cached
    end
    for _, n in ipairs(tried) do
        if shipped(n) then
            return n
        end
    end
    sides.config:raise(sides.model_key, string.format("'%s' is not a model refit ships (tried "
        .. "models/%s.lua)%s nor a folder; set model in the scenario (a shipped name, or the "
        .. "model's config.json or snapshot folder)", m, table.concat(tried, ".lua, models/"),
        context.hf_cache and org and ", in the Hugging Face cache" or ""))
end

-- Fields a scenario may set beside `sides` overlay the ones the file gave (the scenario
-- wins): `train = { placement = ... }`. A side the scenario changed has its faults reported
-- at the scenario (a relation between sizes it broke is the scenario's), not at the YAML
-- keys. Returns the overridden side fields, sorted.
local function overlay_sides(raw, sides, site)
    local overridden = {}
    for _, side in ipairs({ "train", "infer" }) do
        local given = raw[side]
        if given ~= nil then
            if type(given) ~= "table" then
                schema.raise(site, side, string.format("expected a table of fields overriding "
                    .. "what %s gives, got %s", sides.key, schema.describe(given)))
            end
            for k, v in pairs(given) do
                if type(k) ~= "string" then
                    schema.raise(site, side, "expected field names, got " .. schema.describe(k))
                end
                sides[side][k] = v
                overridden[#overridden + 1] = side .. "." .. k
            end
            for field in pairs(sides.origin) do
                if field:sub(1, #side + 1) == side .. "." then
                    sides.origin[field] = nil
                end
            end
        end
    end
    table.sort(overridden)
    return overridden
end

-- A scenario with `sides` (rlconfig.lua): its train and infer tables read from the
-- framework's YAML file and written into `raw` (a copy: scenario.load reads it fresh, studies
-- hand over copies), with what the file also says when the scenario does not: the framework
-- profile, the model, the number of nodes. Fields the scenario sets in train and infer win
-- over the file's. The profile is set only when training and generation run on GPUs of
-- their own: the nemo-rl and verl profiles model the non-colocated paths
-- (models/frameworks/), not the colocated CUDA-IPC one.
local function read_sides(raw, site, base_dir, context)
    local spec = schema.validate(raw.sides, rlconfig.SIDES, site, "sides")
    local hints = { nodes = type(raw.cluster) == "table" and math.type(raw.cluster.nodes)
        == "integer" and raw.cluster.nodes or nil }
    -- A mixed cluster's nodes are its parts' (cluster.load_mixed), where both give them.
    if cluster.is_mixed(raw.cluster) then
        local n = 0
        for _, side in ipairs({ "train", "infer" }) do
            local p = raw.cluster[side]
            n = n and type(p) == "table" and math.type(p.nodes) == "integer" and n + p.nodes
        end
        hints.nodes = n or nil
    end
    local sides = rlconfig.sides(spec, site, base_dir, hints)
    local overridden = overlay_sides(raw, sides, site)
    raw.train, raw.infer = sides.train, sides.infer
    if raw.framework == nil and not sides.colocated then
        raw.framework = sides.framework
    end
    if raw.model == nil and sides.model ~= nil then
        raw.model = sides_model(sides, base_dir, context)
    end
    -- Megatron's expert TP defaults to its TP, which means nothing without experts.
    if sides.etp_follows_tp and raw.model ~= nil and sides.origin["train.etp"] then
        local model = context.load_model(raw.model, site, "model", base_dir)
        if model.experts == 0 then
            raw.train.etp = 1
        end
    end
    if type(raw.cluster) == "string" then
        raw.cluster = { system = raw.cluster }
    end
    if type(raw.cluster) == "table" and not cluster.is_mixed(raw.cluster) then
        local copy = {}
        for k, v in pairs(raw.cluster) do
            copy[k] = v
        end
        copy.nodes = copy.nodes or sides.nodes
        raw.cluster = copy
    end
    sides.note = string.format("%s %s%s", sides.key:gsub("^sides%.", ""), sides.config.file,
        #overridden > 0 and "; set in the scenario: " .. table.concat(overridden, ", ") or "")
    return sides
end

-- Where each side's memory fit (sim/memory.c) is reported, as "file:line: field" prefixes:
-- at the YAML key that sharded the side (its tp, else its GPUs) where the file decided it,
-- else at the side's field in the scenario; `share` names the YAML key of the engine's
-- memory share, where the file set it.
local function fit_sites(sides, site)
    local out = {}
    for _, side in ipairs({ "train", "infer" }) do
        local key = sides and (sides.origin[side .. ".tp"] or sides.origin[side .. ".gpus"])
        if key then
            local w = sides.config:where(key)
            out[side] = string.format("%s:%d: %s: refit's %s", w.file, w.line, key, side)
        else
            out[side] = schema.where(site, side)
        end
    end
    local share = sides and sides.origin["infer.gpu_memory_utilization"]
    if share then
        local w = sides.config:where(share)
        out.share = string.format("%s at %s:%d", share, w.file, w.line)
    end
    return out
end

-- A copy of the scenario table `raw` with its `sides` read into train and infer (and the
-- model, nodes and profile the file implies) and the field itself removed: what a layout
-- search varies, since it rewrites infer as a scenario that writes it by hand.
function scenario.expand_sides(raw, site, base_dir, context)
    local out = {}
    for k, v in pairs(raw) do
        out[k] = v
    end
    if out.sides ~= nil then
        read_sides(out, site, base_dir, context)
        out.sides = nil
    end
    return out
end

-- Validates and normalises a scenario table. `source` names it in errors and in the store
-- (a file path, or a study's "file:line"); relative model and cluster paths are read from
-- `base_dir`. `context.load_model(spec, site, field, base_dir)` resolves the model field
-- (refit.lua), `context.models_dir` holds the cluster presets (<models_dir>/clusters).
-- `overrides` (optional) replaces fields from the command line: { strategy = "hybrid" };
-- `line` (optional) is the line of `source` that built the table.
-- A delta update is refit's own point-to-point plan: its boxes carry the encoded changes
-- (sim/delta.h). A broadcast moves whole tensors, and no framework profile's path sends
-- deltas, so both are refused; the values travel in the wire's dtype.
local function check_delta(upd, s, infer, profile, site)
    if profile then
        schema.raise(site, "update.kind", string.format("delta under profile %s: the "
            .. "framework's refit moves whole tensors; a delta is refit's own plan (leave "
            .. "`framework` out)", profile.name))
    end
    if s.strategy == "broadcast" or s.strategy == "hybrid" then
        schema.raise(site, "strategy", string.format("%s with a delta update: a broadcast "
            .. "moves whole tensors, a delta only the changed elements of each box; use "
            .. "reshard, hierarchical or auto", s.strategy))
    end
    if infer.dtype == "mxfp4" or infer.dtype == "nvfp4" then
        schema.raise(site, "infer.dtype", string.format("%s with a delta update: its values "
            .. "are half a byte each, which refit's encodings do not model (bf16 or fp8)",
            infer.dtype))
    end
    local wire = infer.dtype == "fp8" and "fp8" or "bf16"
    if upd.values and upd.values ~= wire then
        schema.raise(site, "update.values", string.format("'%s', but the values travel in "
            .. "the wire's dtype, %s here (infer.dtype %s); a narrower residual is lossy, "
            .. "which refit does not model", upd.values, wire, infer.dtype))
    end
end

function scenario.normalise(raw, source, base_dir, context, overrides, line)
    -- A table built by a study has no file to rescan for a field's line: its errors point at
    -- the study line that handed it over.
    local site = line and { file = source, line = line, scan = false } or { file = source }
    if overrides and overrides.strategy then
        raw.strategy = overrides.strategy
    end
    local sides = raw.sides ~= nil and read_sides(raw, site, base_dir, context) or nil
    local s = schema.validate(raw, SCENARIO, site, "")
    -- A LoRA update moves the adapters (the plan's model) and leaves the base model, frozen,
    -- on both sides, where the memory check counts it.
    local upd = s.update or { kind = "full" }
    local base = context.load_model(s.model, site, "model", base_dir)
    local model = update.apply(base, upd, site, "update")
    local dirs = { models = context.models_dir, base = base_dir }
    local mixed = cluster.is_mixed(s.cluster)
    local c
    if mixed then
        c = cluster.load_mixed(s.cluster, site, "cluster", dirs, s.train)
        -- The inference side starts on the infer part unless the scenario says where.
        if not (type(raw.infer) == "table" and raw.infer.first_gpu ~= nil) then
            s.infer.first_gpu = c.upper.first_node * c.gpus_per_node
        end
    else
        c = cluster.load(s.cluster, site, "cluster", dirs)
    end
    local train, infer
    -- NeMo RL's cluster.segment_size: the GPUs it uses of each NVLink domain, as whole
    -- segments (rlconfig.lua); those are the domains its sides see, where a segment is
    -- smaller than the preset's domain (GB200's 16 of 18 nodes) and the scenario does not
    -- set the domain itself.
    if sides and sides.segment_gpus and sides.segment_gpus < c.nvlink.domain_gpus
        and not (type(raw.cluster) == "table" and type(raw.cluster.nvlink) == "table"
            and raw.cluster.nvlink.domain_gpus) then
        c.nvlink.domain_gpus = sides.segment_gpus
    end
    if sides then
        -- A config may use part of one node (NeMo RL's 1-GPU and 2-GPU examples on an 8-GPU
        -- machine): its GPUs are the node's first ones, as Ray's placement gives them. On
        -- more nodes the GPUs it leaves out would sit between its own, which no side holds.
        local part = sides.nodes == 1 and sides.gpus_per_node < c.gpus_per_node
        if c.gpus_per_node ~= sides.gpus_per_node and not part then
            sides.config:raise(sides.node_keys[2], string.format("%d GPUs per node, but the "
                .. "cluster %s has %d; name the cluster the config runs on", sides.gpus_per_node,
                c.name, c.gpus_per_node))
        end
        -- Faults of the sizes the YAML decided are reported at its keys.
        train = rlconfig.at_yaml(sides, source, layout.train, s.train, model, site, "train")
        infer = rlconfig.at_yaml(sides, source, function()
            return layout.place(layout.infer(s.infer, model, site, "infer"), c, site, "infer")
        end)
        if mixed then
            rlconfig.at_yaml(sides, source, cluster.close_mixed, c, train, infer, site,
                "cluster")
        end
        rlconfig.at_yaml(sides, source, cluster.fit, c, train, site, "train")
        rlconfig.at_yaml(sides, source, cluster.fit, c, infer, site, "infer")
    else
        train = layout.train(s.train, model, site, "train")
        infer = layout.place(layout.infer(s.infer, model, site, "infer"), c, site, "infer")
        if mixed then
            cluster.close_mixed(c, train, infer, site, "cluster")
        end
        cluster.fit(c, train, site, "train")
        cluster.fit(c, infer, site, "infer")
    end
    local profile = s.framework and framework.load(s.framework, site, "framework",
        { models = context.models_dir, base = base_dir })
    -- Colocated sides (training and the engine on the same GPUs) under a profile run the
    -- profile's colocated path, never silently its non-colocated one: refit plans them as
    -- reshard (each GPU's shards copied where they already are, what must cross between GPUs
    -- sent), which refit-exec replays and verifies; the step is the framework's IPC path.
    local overlap = profile and train.first_gpu < infer.first_gpu + infer.gpus
        and infer.first_gpu < train.first_gpu + train.gpus
    if overlap then
        if train.first_gpu ~= infer.first_gpu or train.gpus ~= infer.gpus then
            schema.raise(site, "infer.first_gpu", string.format("train (GPUs %d-%d) and infer "
                .. "(GPUs %d-%d) overlap in part; under a framework profile the sides are "
                .. "either colocated (the same GPUs) or apart", train.first_gpu,
                train.first_gpu + train.gpus - 1, infer.first_gpu,
                infer.first_gpu + infer.gpus - 1))
        end
        if not profile.colocated then
            schema.raise(site, "framework", string.format("the sides are colocated (GPUs "
                .. "%d-%d), but profile %s has no colocated section: it models only the "
                .. "framework's non-colocated path", train.first_gpu,
                train.first_gpu + train.gpus - 1, profile.name))
        end
        if raw.strategy ~= nil and s.strategy ~= "reshard" then
            schema.raise(site, "strategy", string.format("%s on colocated sides: under profile "
                .. "%s the refit is its colocated IPC path, which refit plans as reshard",
                s.strategy, profile.name))
        end
        local fsdp = profile.colocated.export == "fsdp"
        if fsdp ~= (train.fsdp == true) then
            schema.raise(site, "framework", string.format("profile %s exports %s on colocated "
                .. "sides, but the training side is %s; set framework = { profile = '%s', "
                .. "colocated = { export = '%s' } }", profile.name,
                fsdp and "with FSDP's full_tensor()" or "through Megatron-Bridge",
                train.fsdp and "FSDP" or "Megatron (not FSDP)", profile.name,
                fsdp and "export" or "fsdp"))
        end
        profile.colocated_run = true
        s.strategy = "reshard"
    -- A scenario under a profile that names no strategy runs the framework's own default
    -- path (its profile lists it first: NeMo RL's and verl's gather-and-broadcast), not
    -- refit's default reshard, which no framework runs the way refit plans it.
    elseif profile and raw.strategy == nil and profile.strategies then
        s.strategy = profile.strategies[1]
    end
    -- Strategy p2p is a framework's point-to-point path: refit plans it as the profile's p2p
    -- section says (reshard, or broadcast after the reads) and the step is the framework's.
    if s.strategy == "p2p" then
        if not profile then
            schema.raise(site, "strategy", "p2p is a framework's point-to-point path: name "
                .. "a framework profile that runs one (framework = 'miles', 'nemo-rl', "
                .. "'checkpoint-engine' or 'perplexity')")
        end
        local listed = false
        for _, name in ipairs(profile.strategies) do
            listed = listed or name == "p2p"
        end
        if not listed or not profile.p2p then
            schema.raise(site, "strategy", string.format("p2p: profile %s has no "
                .. "point-to-point path (it runs %s)", profile.name,
                table.concat(profile.strategies, ", ")))
        end
        if profile.p2p.gather == "fsdp" and not train.fsdp then
            schema.raise(site, "train.fsdp", string.format("profile %s gathers with FSDP's "
                .. "full_tensor(), but the training side is Megatron; set train.fsdp = true",
                profile.name))
        end
        -- NeMo RL's NIXL path pairs policy rank i with rollout rank i; the policy ranks past
        -- the rollout world only drain the export (_source_rank_for_rollout).
        if profile.p2p.select == "dense_whole" and train.gpus < infer.gpus then
            schema.raise(site, "infer.gpus", string.format("%d inference GPUs, but profile %s "
                .. "pairs training rank i with inference rank i: it needs at least as many "
                .. "training GPUs (%d)", infer.gpus, profile.name, train.gpus))
        end
        profile.p2p_run = true
        s.strategy = profile.p2p.plan
    end
    -- The profiles' conversions are FP8's (their quantize field): a 4-bit engine is refit's
    -- own plan.
    if profile and (infer.dtype == "mxfp4" or infer.dtype == "nvfp4") then
        schema.raise(site, "infer.dtype", string.format("%s under profile %s: the profiles "
            .. "model the frameworks' FP8 conversions only; leave `framework` out for refit's "
            .. "own plan", infer.dtype, profile.name))
    end
    if raw.refit ~= nil and not profile then
        schema.raise(site, "refit", string.format("'%s' needs a framework profile: refit's own "
            .. "plans set nothing up per job", s.refit))
    end
    if profile then
        profile.refit = s.refit
    end
    -- The framework's buffers are the rounds in flight, unless the scenario set streams.
    local raw_cal = type(raw.cluster) == "table" and raw.cluster.calibration
    local path = profile_path(profile)
    if path and not (type(raw_cal) == "table" and raw_cal.streams) then
        c.calibration.streams = path.buffers
    end
    if upd.kind == "delta" then
        check_delta(upd, s, infer, profile, site)
    end
    -- vLLM's fused-MoE LoRA runs without expert parallelism only (FusedMoEWithLoRA, vLLM
    -- vllm/lora/layers/fused_moe.py @ 0002540c, asserts `not base_layer.use_ep`).
    if upd.kind == "lora" and infer.ep > 1 then
        for _, t in ipairs(model.tensors) do
            if t.experts and t.experts > 0 then
                schema.raise(site, "infer.ep", string.format("%d, but the adapters of %s's "
                    .. "routed experts need an engine without expert parallelism (vLLM runs "
                    .. "LoRA on fused MoE layers with ep = 1 only); set infer.ep = 1 or name "
                    .. "the attention and dense modules in update.targets", infer.ep, base.name))
            end
        end
    end
    if s.overlap then
        if profile then
            schema.raise(site, "overlap", string.format("under profile %s: a framework's "
                .. "refit is its step (export, transfer, load), which refit does not overlap "
                .. "with generation yet; leave `framework` out", profile.name))
        end
        -- The ports generation shares with the refit, as sim/topology.c rates them: the
        -- inference GPUs' NVLink and NIC (a mixed cluster's upper part has its own).
        local g = s.overlap.generation_gbps
        local cal = c.calibration
        local nvl = mixed and c.upper.nvlink_gbps or c.nvlink.gbps
        local nic = mixed and c.upper.nic_gbps or c.nic.gbps
        local ports = { { "NVLink", nvl * cal.nvlink_efficiency } }
        if c.nic.per_node > 0 then
            ports[2] = { "NIC", nic * cal.nic_efficiency }
        end
        for _, p in ipairs(ports) do
            if g >= p[2] then
                schema.raise(site, "overlap.generation_gbps", string.format("%.6g GB/s of "
                    .. "generation is at or above the inference GPUs' %s port (%.6g GB/s after "
                    .. "calibration), leaving the refit nothing", g, p[1], p[2]))
            end
        end
        if s.overlap.engines == "rolling" and raw.overlap.granularity ~= nil then
            schema.raise(site, "overlap.granularity", "set for rolling engines, which are "
                .. "taken out of generation and refitted in place; the granularity is where "
                .. "an engine that keeps generating lands the new weights (engines = 'all')")
        end
    end
    local staging, bucket = staging_bytes(s.staging_mb, c, profile, site)
    check_staging(staging, s.staging_mb, c, site, bucket)
    return {
        source = source,
        model = model,
        strategy = s.strategy,
        train = train,
        infer = infer,
        cluster = c,
        staging_bytes = staging,
        chunk_bytes = s.chunk_kib and math.min(s.chunk_kib * 1024, staging) or 0,
        relay = s.relay or { ring = true, fanout = 1, depth = 0 },
        sources = s.sources,
        allow_overcommit = s.allow_overcommit,
        -- A profile's bulk path is planned as the framework runs it (reshard.plan), unless
        -- the scenario says hybrid_bulk itself.
        tensor_strategy = tensor_strategies(s, model, site,
            (raw.hybrid_bulk == nil and profile and profile.reshard and profile.reshard.plan)
            or s.hybrid_bulk),
        framework = profile or nil,
        sides = sides and sides.note or nil,
        update = update.note(upd),
        overlap = s.overlap,
        frozen_model = upd.kind == "lora" and base or nil,
        fit_sites = fit_sites(sides, site),
    }
end

-- Loads the scenario at `path`: read, then normalise relative to its own directory.
function scenario.load(path, context, overrides)
    return scenario.normalise(scenario.read(path, context), path, dirname(path), context,
        overrides)
end

return scenario
