-- framework.lua: framework profiles. framework.profile{...} validates a profile file
-- (models/frameworks/<name>.lua); framework.load turns a scenario's `framework` field into
-- the normalised profile the C side reads into struct rf_framework (sim/framework.h).

-- A profile says how one RL framework runs the refit step, read from its public code
-- (doc/research/frameworks.md): which strategies it runs, how its broadcast path gathers,
-- buckets, overlaps and quantises, and how its reshard bulk path (if any) is driven. It
-- holds mechanisms and counts, never times: a framework call costs the cluster's
-- calibration.tensor_overhead_us, a bucket its bucket_overhead_us. A scenario names one:
--   framework = "nemo-rl"                                   -- a preset
--   framework = "../my-profile.lua"                         -- a profile file
--   framework = { profile = "nemo-rl", broadcast = { buffers = 1 } }  -- with overrides
-- Overrides are checked with the profile's schema, every field optional; problems in them
-- are reported at the scenario's line as `framework.<field>`.

local schema = require("schema")
local sandbox = require("sandbox")
local file = require("file")
local policy = require("policy")

local framework = {}

-- The presets in models/frameworks/ (t/lua/frameworks.lua checks the folder holds these).
framework.PRESETS = { "checkpoint-engine", "m2n", "miles", "nemo-rl", "perplexity", "slime",
    "verl" }

-- The strategies a framework may run: every named one but auto, which is refit's own
-- search over strategies, not something a framework does.
local STRATEGIES = {}
for _, s in ipairs(policy.strategies) do
    if s ~= "auto" then
        STRATEGIES[#STRATEGIES + 1] = s
    end
end
-- "p2p": the framework's point-to-point path (its p2p section), which a scenario names as
-- its strategy; refit plans it as the section's `plan` says.
STRATEGIES[#STRATEGIES + 1] = "p2p"

-- Framework calls per Hugging Face tensor: a count, at most a million.
local function calls(required)
    return { type = "number", min = 0, max = 1e6, required = required }
end

local function flag()
    return { type = "boolean", default = false }
end

-- A bucket is either a fraction of the GPU's memory with a cap (NeMo RL's
-- NRL_REFIT_BUFFER_MEMORY_RATIO, at most 5 GiB) or a fixed size (verl, slime, miles,
-- checkpoint-engine); finish() checks that exactly one form is written. MiB, at most 1 TiB.
local MAX_MIB = 1 << 20
local BUCKET = { type = "record", required = true, fields = {
    hbm_fraction = { type = "number", above = 0, max = 1 },
    max_mib = { type = "integer", min = 1, max = MAX_MIB },
    mib = { type = "integer", min = 1, max = MAX_MIB },
} }

local BROADCAST = { type = "record", fields = {
    -- Who is in the broadcast communicator: every training and inference GPU ("all"), or
    -- the root and the inference side ("receivers").
    communicator = { type = "string", values = { "all", "receivers" }, required = true },
    -- Which GPU broadcasts a tensor: the first training GPU, the first GPU of the tensor's
    -- PP stage, or the GPU holding the tensor's first element.
    root = { type = "string", values = { "first", "stage", "owner" }, required = true },
    -- How the root comes to hold whole tensors (sim/framework.h, enum rf_fw_gather).
    gather = { type = "string", values = { "p2p", "export", "stage", "host" }, required = true },
    bucket = BUCKET,
    -- 2: export, wire and load of consecutive buckets overlap; 1: they do not.
    buffers = { type = "integer", min = 1, max = 2, required = true },
    per_tensor = flag(),  -- one broadcast per tensor, not per bucket
    wait_load = flag(),   -- the sender waits for the engine's load before the next bucket
    pack_copy = flag(),   -- the root packs each bucket with one HBM copy
    -- Where BF16 becomes FP8 when the inference side is FP8.
    quantize = { type = "string", values = { "sender", "receiver_full", "receiver_shard" },
                 required = true },
    export_calls = calls(true),
    load_calls = calls(true),
    -- The engine's loader: "vllm" (one weight_loader call per HF tensor, per expert and
    -- projection for FusedMoE) or "sglang" (the same, and each tensor scans the expert
    -- mapping linearly: calibration.loader_scan_us an entry, 3 entries an expert).
    loader = { type = "string", values = { "vllm", "sglang" }, default = "vllm" },
} }

-- The colocated path: training and the engine share every GPU (verl's hybrid engine, NeMo
-- RL's colocated IPC path). The framework's export puts whole tensors on every GPU, each GPU
-- copies them into an IPC buffer its engine maps, and the engine loads from it; around it
-- the framework moves optimizer state and weights between host and GPU.
local COLOCATED = { type = "record", fields = {
    -- How whole tensors reach every GPU: Megatron-Bridge's export ("export": PP broadcast, TP
    -- all-gather, EP all-gathers per local expert) or FSDP's full_tensor() ("fsdp": one
    -- all-gather per parameter over the data-parallel group).
    export = { type = "string", values = { "export", "fsdp" }, required = true },
    -- The IPC buffer: a fixed size or a fraction of the GPU's memory with a cap.
    bucket = BUCKET,
    -- 2: the sender fills one buffer while the engine loads the other (needs a citation of
    -- the synchronisation that allows it); 1: the sender waits for the engine's ACK.
    buffers = { type = "integer", min = 1, max = 2, required = true },
    clone = flag(),              -- the engine clones each tensor out of the IPC buffer
    quantize = { type = "string", values = { "sender", "receiver_full", "receiver_shard" },
                 required = true },
    export_calls = calls(true),
    load_calls = calls(true),
    offload_optimizer = flag(),  -- optimizer state to host memory before the refit
    wake_weights = flag(),       -- the engine's weights come back from host (sleep level 1)
    offload_weights = flag(),    -- the training weights go to host memory after the refit
} }

local RESHARD = { type = "record", fields = {
    -- Training PP stages the receivers take at a time; 0: all at once.
    -- What refit plans the bulk as: "hierarchical" (NCCL M2N's algorithm: per box one
    -- leader per destination NVLink domain, relayed round the ring of domains) or "reshard"
    -- (every destination fed by a source directly). A scenario's hybrid_bulk overrides it.
    plan = { type = "string", values = { "reshard", "hierarchical" }, required = true },
    stage_groups = { type = "integer", min = 0, max = schema.MAX_GPUS, required = true },
    misc_after_bulk = flag(), -- the broadcast part starts once the bulk has ended
    stack_experts = flag(),   -- senders stack their local experts (one HBM copy)
    fused_copy = flag(),      -- receivers land fused targets in a temporary, then copy
    calls = calls(true),      -- framework calls per bulk tensor
    -- Barriers over the communicator in each call's device kernel (NCCL M2N: one at the
    -- start, one at the end), each calibration.barrier_us; each call is one kernel launch
    -- (calibration.kernel_launch_us) from the engine's host thread. 0: not modelled.
    barriers = { type = "integer", min = 0, max = 16, default = 0 },
    -- The calls' times add up: each call runs alone and none overlaps the next (M2N's
    -- reshard_model_bench reports the slowest rank's sum of its per-pattern timings).
    serial_calls = flag(),
} }

-- A point-to-point path (doc/research/p2p-paths.md): the senders gather, convert and stage
-- what they send; pairs move it by RDMA writes or reads; the receivers load it. A scenario
-- runs it with strategy = "p2p" (sim/step_p2p.c).
local P2P = { type = "record", fields = {
    -- What refit plans (and refit-exec replays): "reshard" (each engine GPU its shard, from
    -- holders refit picks) or "broadcast" (a reader per NIC, then a broadcast to the
    -- engine's group: checkpoint-engine).
    plan = { type = "string", values = { "reshard", "broadcast" }, required = true },
    -- How the senders come to hold what they send: "stage" (every rank of a stage gathers
    -- the stage's whole tensors), "export" (Megatron-Bridge on every rank, every stage),
    -- "fsdp" (full_tensor() per parameter over its data-parallel group), "host" (already in
    -- pinned host memory on their owner).
    gather = { type = "string", values = { "stage", "export", "fsdp", "host" }, required = true },
    -- What a receiver gets: its "shard", or every dense tensor whole and its experts' shard
    -- ("dense_whole").
    select = { type = "string", values = { "shard", "dense_whole" }, default = "shard" },
    -- Where the bytes leave from (pinned "host" memory or the sender's "gpu"), the verb
    -- ("write": the sender's; "read": the receiver's), and where they land ("weights": the
    -- engine's live weights, no loader; "buffer": a buffer the engine loads from).
    from = { type = "string", values = { "host", "gpu" }, required = true },
    verb = { type = "string", values = { "write", "read" }, required = true },
    into = { type = "string", values = { "weights", "buffer" }, required = true },
    -- Each sender runs the engine's loader on a CPU replica of each distinct target rank, a
    -- blocking D2H copy of the target's slice per tensor (miles).
    cpu_loader = flag(),
    -- Writes to every target rank but the last are waited; the last overlaps the next bucket.
    wait_nonlast = flag(),
    -- A receiver loads bucket k before it reads bucket k + 1.
    receiver_serial = flag(),
    -- The sender copies what it sends into its registered buffer (one HBM copy).
    pack_copy = flag(),
    -- The experts move as a second group once the dense tensors have (a barrier between).
    experts_after = flag(),
    bucket = BUCKET,
    -- 2: the sender works one bucket ahead of the wire (needs a citation); 1: in turn.
    buffers = { type = "integer", min = 1, max = 2, required = true },
    quantize = { type = "string", values = { "sender", "receiver_full", "receiver_shard" },
                 default = "sender" },
    export_calls = calls(true),
    load_calls = calls(true),
    loader = { type = "string", values = { "vllm", "sglang" }, default = "vllm" },
    -- What is registered with the NIC: "replica_params" (every parameter of the CPU replica,
    -- reg_region_us each), "buffers" (register_regions a worker), "none"; on the first refit,
    -- or at every refit with register_every_refit.
    register = { type = "string", values = { "none", "replica_params", "buffers" },
                 default = "none" },
    register_regions = { type = "integer", min = 0, max = schema.MAX_GPUS, default = 0 },
    register_every_refit = flag(),
} }

-- One citation: the public code a field mirrors. `field` is the dotted profile field it
-- backs ("broadcast.bucket", "reshard"), so every section can be checked to cite something.
local SOURCE = { type = "record", fields = {
    field = { type = "string", required = true },
    repo = { type = "string", required = true },
    commit = { type = "string", required = true },
    file = { type = "string", required = true },
    func = { type = "string", required = true },
    says = { type = "string", required = true },
} }

-- What framework.profile{...} accepts.
framework.PROFILE = { type = "record", fields = {
    name = { type = "string", required = true },
    strategies = { type = "list", min_items = 1, required = true,
                   items = { type = "string", values = STRATEGIES } },
    broadcast = BROADCAST,
    -- Seconds once per refit on the engine (vLLM's process_weights_after_loading); 0
    -- unless a cited measurement exists. At most an hour.
    finalize_s = { type = "number", min = 0, max = 3600, default = 0 },
    reshard = RESHARD,
    colocated = COLOCATED,
    p2p = P2P,
    sources = { type = "list", min_items = 1, required = true, items = SOURCE },
} }

-- The schema of overrides: the same fields, all optional, no defaults.
local function optional(spec)
    local out = {}
    for k, v in pairs(spec) do
        out[k] = v
    end
    out.required, out.default = nil, nil
    if spec.fields then
        out.fields = {}
        for name, sub in pairs(spec.fields) do
            out.fields[name] = optional(sub)
        end
    end
    if spec.items then
        out.items = spec.items -- a list's entries stay whole (each citation complete)
    end
    return out
end

-- A scenario's `framework` table: `profile` (a preset name or a path to a profile file)
-- plus any field of framework.PROFILE as an override.
framework.SPEC = optional(framework.PROFILE)
framework.SPEC.fields.profile = { type = "string", required = true }

-- The fields a citation may name: every dotted path of the profile schema.
local FIELDS = {}
local function collect(spec, prefix)
    for name, sub in pairs(spec.fields or {}) do
        local path = prefix and prefix .. "." .. name or name
        if name ~= "sources" then
            FIELDS[path] = true
            collect(sub, path)
        end
    end
end
collect(framework.PROFILE, nil)
local FIELD_NAMES = {}
for name in pairs(FIELDS) do
    FIELD_NAMES[#FIELD_NAMES + 1] = name
end
table.sort(FIELD_NAMES)

local function copy(t)
    if type(t) ~= "table" then
        return t
    end
    local out = {}
    for k, v in pairs(t) do
        out[k] = copy(v)
    end
    return out
end

local function has(list, value)
    for _, v in ipairs(list) do
        if v == value then
            return true
        end
    end
    return false
end

-- A bucket is one of its two forms: { mib = } or { hbm_fraction =, max_mib = }.
local function check_bucket(k, section, blame)
    if k.mib and (k.hbm_fraction or k.max_mib) then
        blame({ section .. ".bucket.mib", section .. ".bucket" }, "a fixed bucket excludes "
            .. "hbm_fraction and max_mib; write { mib = } or { hbm_fraction =, max_mib = }")
    elseif not k.mib and not (k.hbm_fraction and k.max_mib) then
        blame({ section .. ".bucket" }, "expected { mib = } or { hbm_fraction =, max_mib = }")
    end
end

-- Checks relations between fields of a validated profile `p`. blame(fields, message)
-- raises at the first of `fields` (dotted names) the user should change.
local function finish(p, blame)
    local b, r = p.broadcast, p.reshard
    local wants_broadcast = has(p.strategies, "broadcast") or has(p.strategies, "hybrid")
    local wants_reshard = has(p.strategies, "reshard") or has(p.strategies, "hierarchical")
        or has(p.strategies, "hybrid")
    if wants_broadcast and not b then
        blame({ "broadcast", "strategies" }, "strategies broadcast and hybrid need a "
            .. "broadcast section (how the framework runs its broadcast path); there is none")
    end
    if wants_reshard and not r then
        blame({ "reshard", "strategies" }, "strategies reshard, hierarchical and hybrid "
            .. "need a reshard section (how the framework drives its bulk path); there is none")
    end
    if b then
        check_bucket(b.bucket, "broadcast", blame)
        if b.per_tensor and b.pack_copy then
            blame({ "broadcast.pack_copy", "broadcast.per_tensor" }, "true, but per_tensor "
                .. "broadcasts each tensor on its own: there is no bucket to pack")
        end
        if b.wait_load and b.buffers > 1 then
            blame({ "broadcast.wait_load", "broadcast.buffers" }, string.format("true with %d "
                .. "buffers: a sender that waits for each load overlaps nothing, so buffers "
                .. "must be 1", b.buffers))
        end
    end
    if p.colocated then
        check_bucket(p.colocated.bucket, "colocated", blame)
    end
    local q = p.p2p
    if has(p.strategies, "p2p") and not q then
        blame({ "p2p", "strategies" }, "strategy p2p needs a p2p section (how the framework "
            .. "runs its point-to-point path); there is none")
    end
    if q then
        check_bucket(q.bucket, "p2p", blame)
        -- (A CPU replica's loader runs on the sender: its load_calls are the sender's.)
        if q.into == "weights" and ((q.load_calls > 0 and not q.cpu_loader)
            or q.receiver_serial) then
            blame({ "p2p.into", q.load_calls > 0 and "p2p.load_calls" or "p2p.receiver_serial" },
                "'weights', but the receiver loads: bytes written into the engine's live "
                .. "weights need no loader; set into = 'buffer' or load_calls = 0")
        end
        if q.cpu_loader and q.from ~= "host" then
            blame({ "p2p.from", "p2p.cpu_loader" }, "'gpu', but a CPU replica's loader stages "
                .. "the bytes in pinned host memory: set from = 'host'")
        end
        if (q.register == "buffers") ~= (q.register_regions > 0) then
            blame({ "p2p.register_regions", "p2p.register" }, "register = 'buffers' takes "
                .. "register_regions > 0 (regions a worker), and only it")
        end
        if q.plan == "broadcast" and not b then
            blame({ "p2p.plan", "broadcast" }, "'broadcast' broadcasts as the profile's "
                .. "broadcast section says; there is none")
        end
        if q.plan == "broadcast" and q.gather ~= "host" then
            blame({ "p2p.plan", "p2p.gather" }, "'broadcast' reads from the owners' pinned "
                .. "host memory (gather = 'host'), then broadcasts; other gathers plan reshard")
        end
    end
    -- Every citation names a field of the profile, and every section used cites something.
    local cited, fields_cited = {}, {}
    for i, s in ipairs(p.sources) do
        if not FIELDS[s.field] then
            blame({ "sources." .. i .. ".field" }, string.format(
                "'%s' is not a profile field%s", s.field, schema.suggest(s.field, FIELD_NAMES)))
        end
        cited[s.field:match("^[^.]+")] = true
        fields_cited[s.field] = true
    end
    -- Phases overlap only where the framework's code lets them: two buffers must cite the
    -- synchronisation that allows it (the step prints the citation beside the overlap).
    for _, section in ipairs({ "broadcast", "colocated", "p2p" }) do
        if p[section] and p[section].buffers == 2 and not fields_cited[section .. ".buffers"] then
            blame({ section .. ".buffers", "sources" }, string.format("2 buffers overlap "
                .. "export, wire and load; cite the code that lets them (a source with field = "
                .. "'%s.buffers'), or set 1", section))
        end
    end
    for _, section in ipairs({ "strategies", "broadcast", "reshard", "colocated", "p2p" }) do
        if p[section] and not cited[section] then
            blame({ "sources" }, string.format("no citation for %s (add a source with field = "
                .. "'%s' or one of its fields)", section, section))
        end
    end
    return p
end

-- What the citation of `field` says (the reason printed beside an overlap), or nil.
local function says(p, field)
    for _, s in ipairs(p.sources) do
        if s.field == field then
            return string.format("%s (%s, %s)", s.says, s.file, s.func)
        end
    end
    return nil
end

local function bucket_form(k)
    return { hbm_fraction = k.hbm_fraction or 0, max_mib = k.max_mib or 0, mib = k.mib or 0 }
end

-- The normalised profile of the Lua -> C contract: every field present, the absent
-- sections false, a bucket's unused form 0.
local function normalise(p, path)
    local out = {
        name = p.name,
        source = path,
        strategies = copy(p.strategies),
        finalize_s = p.finalize_s,
        broadcast = false,
        reshard = false,
        sources = copy(p.sources),
    }
    if p.broadcast then
        local b = copy(p.broadcast)
        b.bucket = bucket_form(b.bucket)
        b.overlap_why = b.buffers == 2 and says(p, "broadcast.buffers") or ""
        out.broadcast = b
    end
    if p.reshard then
        out.reshard = copy(p.reshard)
    end
    out.p2p = false
    if p.p2p then
        local q = copy(p.p2p)
        q.bucket = bucket_form(q.bucket)
        q.overlap_why = q.buffers == 2 and says(p, "p2p.buffers") or ""
        out.p2p = q
    end
    out.colocated = false
    if p.colocated then
        local c = copy(p.colocated)
        c.bucket = bucket_form(c.bucket)
        c.overlap_why = c.buffers == 2 and says(p, "colocated.buffers") or ""
        out.colocated = c
    end
    return out
end

-- Tables built by framework.profile, with where they were written and the validated
-- fields, so overrides can be applied and checked again.
local built = setmetatable({}, { __mode = "k" })

-- framework.profile{...} in a profile file: validates and returns the normalised profile.
function framework.profile(spec)
    local site = sandbox.caller()
    if type(spec) ~= "table" then
        schema.raise(site, "framework.profile", "expected a table of fields, got "
            .. schema.describe(spec))
    end
    local base = schema.validate(spec, framework.PROFILE, site, "")
    finish(base, function(fields, message)
        schema.raise(site, fields[1], message)
    end)
    local p = normalise(base, site.file)
    built[p] = { site = site, base = base }
    return p
end

-- Applies the overrides (a validated framework.SPEC table) onto a copy of `base`: records
-- merge field by field, except a bucket, whose two forms exclude each other, and lists
-- (strategies), which replace; sources are added to the profile's.
local function merge(base, overrides)
    local out = copy(base)
    local function into(dst, src)
        for k, v in pairs(src) do
            if type(v) == "table" and k ~= "bucket" and type(dst[k]) == "table"
                and #v == 0 then
                into(dst[k], v)
            else
                dst[k] = copy(v)
            end
        end
    end
    for k, v in pairs(overrides) do
        if k == "sources" then
            for _, s in ipairs(v) do
                out.sources[#out.sources + 1] = copy(s)
            end
        elseif k ~= "profile" then
            if type(v) == "table" and #v == 0 and type(out[k]) == "table" then
                into(out[k], v)
            else
                out[k] = copy(v)
            end
        end
    end
    return out
end

-- True when the overrides wrote the dotted `field`, or a table above it that `base` (the
-- preset) did not have: a fault inside a section the scenario added is the scenario's.
local function given(overrides, base, field)
    local t, b = overrides, base
    for part in field:gmatch("[^.]+") do
        local key = math.tointeger(tonumber(part)) or part
        if type(t) ~= "table" or t[key] == nil then
            return false
        end
        t = t[key]
        b = type(b) == "table" and b[key] or nil
        if type(t) ~= "table" or b == nil then
            return true
        end
    end
    return true
end

-- Path of a profile: a bare name is <models>/frameworks/<name>.lua and must be a preset; a
-- path (ending in .lua or containing '/') is taken from base (the naming file's directory).
local function resolve(name, dirs, site, field)
    if file.is_preset(name) and not has(framework.PRESETS, name) then
        local quoted = {}
        for i, p in ipairs(framework.PRESETS) do
            quoted[i] = string.format("'%s'", p)
        end
        schema.raise(site, field, string.format("unknown profile '%s'%s; the presets are "
            .. "%s, or give the path of a profile file", name,
            schema.suggest(name, framework.PRESETS), table.concat(quoted, ", ")))
    end
    return file.spec_path(name, "frameworks", dirs)
end

local function globals()
    return { framework = { profile = framework.profile } }
end

-- Loads the profile `spec` (a preset name or path, or a scenario's framework table with
-- overrides) and returns the normalised profile. Faults in `spec` are raised at `site` as
-- `field`...; dirs = { models = <models dir>, base = <directory of the naming file> }.
function framework.load(spec, site, field, dirs)
    dirs = dirs or {}
    local named = type(spec) == "string"
    local s = schema.validate(named and { profile = spec } or spec, framework.SPEC, site, field)
    local name_field = named and field or field .. ".profile"
    local path = resolve(s.profile, dirs, site, name_field)
    local preset = sandbox.run(path, globals(), site, name_field)
    local info = type(preset) == "table" and built[preset]
    if not info then
        schema.raise({ file = path }, "return", "expected the file to return a profile built "
            .. "by framework.profile{...}, got " .. schema.describe(preset))
    end
    if named then
        return copy(preset)
    end
    -- The merged profile is checked whole again: an override may add a section the preset
    -- lacks, or break a relation between fields.
    local merged = merge(info.base, s)
    local nbase = #info.base.sources
    local function blame(f, message)
        -- Citations the scenario added follow the preset's in the merged list.
        local i, rest = f:match("^sources%.(%d+)(.*)$")
        if i and tonumber(i) > nbase then
            schema.raise(site, string.format("%s.sources.%d%s", field, tonumber(i) - nbase,
                rest), message)
        elseif not i and given(s, info.base, f) then
            schema.raise(site, field .. "." .. f, message)
        end
    end
    local checked, bad, message = schema.check(merged, framework.PROFILE, "")
    if bad then
        blame(bad, message)
        schema.raise(info.site, bad, message)
    end
    finish(checked, function(fields, msg)
        for _, f in ipairs(fields) do
            blame(f, msg)
        end
        schema.raise(info.site, fields[1], msg)
    end)
    return normalise(checked, path)
end

return framework
