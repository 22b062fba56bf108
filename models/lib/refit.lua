-- refit.lua: the module the C side loads with require("refit"); the entry points of the Lua
-- half (doc/architecture.md, "Contract: Lua -> C").

-- C sets package.path to <models>/lib/?.lua and refit.models_dir to <models> right after
-- require. Every error is raised as one string "<file>:<line>: <dotted.field>: <message>".

local schema = require("schema")
local file = require("file")
local sandbox = require("sandbox")
local transformer = require("transformer")
local hf = require("hf")
local policy = require("policy")
local scenario = require("scenario")
local cluster = require("cluster")
local search = require("search")

local refit = {}

-- The strategies a scenario may name (one list, kept in policy.lua).
refit.strategies = policy.strategies

-- Default models directory: the parent of this file's directory (models/lib/refit.lua ->
-- models), for use without C, e.g. `lua5.4` with package.path set by hand.
local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
end

local function parent(dir)
    if dir == "." then
        return ".."
    end
    return dirname(dir)
end

refit.models_dir = parent(dirname((debug.getinfo(1, "S").source:gsub("^@", ""))))

local load_model

-- Model files being run, outermost first, so that a file including itself (directly or
-- through others) is refused instead of recursing until the C stack overflows. Paths are
-- compared lexically normalised ("a/./b/../c.lua" is "a/c.lua"); the depth cap catches
-- what that cannot see (a cycle through symbolic links).
local loading = {}
local MAX_INCLUDE_DEPTH = 16

local function normalise_path(path)
    local parts = {}
    for part in path:gmatch("[^/]+") do
        if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
            parts[#parts] = nil
        elseif part ~= "." then
            parts[#parts + 1] = part
        end
    end
    local out = table.concat(parts, "/")
    if path:sub(1, 1) == "/" then
        return "/" .. out
    end
    return out == "" and "." or out
end

-- include(name) in a model file: load another model file (a name in models/ or a path
-- relative to the including file) and return its model.
local function include(name)
    local site = sandbox.caller()
    if type(name) ~= "string" then
        schema.raise(site, "include", "expected a model name, got " .. schema.describe(name))
    end
    return load_model(name, site, "include", dirname(site.file))
end

-- What model and scenario files see besides the safe standard library.
local function globals()
    return { transformer = { dense = transformer.dense, moe = transformer.moe },
             include = include }
end

-- Runs the model file at `path` (named at `site` as `field`), refusing include cycles.
local function run_model_file(path, site, field)
    local key = normalise_path(path)
    for i, entry in ipairs(loading) do
        if entry.key == key then
            local chain = {}
            for j = i, #loading do
                chain[#chain + 1] = loading[j].path
            end
            chain[#chain + 1] = path
            schema.raise(site, field, string.format("'%s' includes itself (%s)", entry.path,
                table.concat(chain, " -> ")))
        end
    end
    if #loading >= MAX_INCLUDE_DEPTH then
        schema.raise(site, field, string.format("includes nest deeper than %d files (%s -> ...)",
            MAX_INCLUDE_DEPTH, loading[1].path))
    end
    loading[#loading + 1] = { key = key, path = path }
    local ok, model = pcall(sandbox.run, path, globals(), site, field)
    loading[#loading] = nil
    if not ok then
        error(model, 0)
    end
    return model
end

-- Relative paths are taken from base_dir (the directory of the file naming them), or from
-- the working directory when the spec comes from the command line.
local function resolve_path(path, base_dir)
    if base_dir and path:sub(1, 1) ~= "/" then
        return base_dir .. "/" .. path
    end
    return path
end

-- The model name of a Hugging Face folder: the repository's name for a cache folder
-- (models--org--name, or one of its snapshots/<commit>), else the folder's own name.
local function folder_model_name(dir)
    local cache = dir:match("([^/]*)/snapshots/[^/]+$")
    local base = cache and cache:match("^models%-%-") and cache or dir:match("([^/]*)$")
    local repo = base:match("^models%-%-(.+)$")
    if repo then
        return repo:match("^.-%-%-(.+)$") or repo
    end
    return base
end

-- The model name of a config.json: its folder's (…/DeepSeek-V3/config.json), or the
-- file's name without .json.
local function json_model_name(path)
    local file_name = path:match("([^/]*)$")
    if file_name == "config.json" then
        return folder_model_name(dirname(path))
    end
    return (file_name:gsub("%.json$", ""))
end

-- `part` (hf.lua): which part of a multimodal checkpoint, asked for at `site` as `field`.
local function load_json_model(path, site, field, name, part, part_site, part_field)
    -- refit.json is preloaded by the refit command; plain lua5.4 has no JSON decoder.
    local ok, json = pcall(require, "refit.json")
    if not ok then
        schema.raise(site, field, "reading " .. path
            .. " needs the JSON decoder of the refit command (module refit.json)")
    end
    local text = sandbox.read(path, site, field)
    return hf.model(json.decode(text, path), name or json_model_name(path), path,
        { part = part, site = part_site, field = part_field })
end

-- The config.json of a Hugging Face folder `dir`: a snapshot (a model's files, its
-- config.json among them) or a cache folder (models--org--name: refs/main names the
-- snapshot in snapshots/, else the only snapshot there). Problems are raised at `site` as
-- `field`, naming the path that is wrong.
local function folder_config(dir, site, field)
    local cfg = dir .. "/config.json"
    local text, reason = file.read(cfg)
    if text then
        return cfg
    elseif not reason:find("no such file", 1, true) then
        schema.raise(site, field, cfg .. ": " .. reason)
    end
    local snapshots = file.subdirs(dir .. "/snapshots")
    if not snapshots then
        schema.raise(site, field, string.format("%s: is a directory, but not a Hugging Face "
            .. "model folder: it has no config.json (a snapshot) and no snapshots/ (a cache "
            .. "folder models--org--name)", dir))
    end
    local ref = file.read(dir .. "/refs/main")
    local snapshot
    if ref then
        -- refs/main holds the commit hash of the snapshot main resolved to.
        local commit = ref:match("^%s*(%x+)%s*$")
        if not commit then
            schema.raise(site, field, string.format("%s/refs/main: expected a commit hash, got "
                .. "%s", dir, schema.describe(ref:match("^%s*(.-)%s*$"):sub(1, 64))))
        end
        snapshot = commit
    elseif #snapshots == 1 then
        snapshot = snapshots[1]
    else
        schema.raise(site, field, string.format("%s: %d snapshots and no refs/main to choose "
            .. "one; give the snapshot folder (%s/snapshots/<commit>)", dir, #snapshots, dir))
    end
    cfg = string.format("%s/snapshots/%s/config.json", dir, snapshot)
    text, reason = file.read(cfg)
    if not text then
        schema.raise(site, field, string.format("%s: %s (the snapshot %s names)", cfg, reason,
            ref and "refs/main" or "the only one in snapshots/"))
    end
    return cfg
end

-- Whether `path` names a folder (file.subdirs lists only folders).
local function is_folder(path)
    return file.subdirs(path) ~= nil
end

-- A model given as a table of options ({ path = ..., part = "vision" }): its schema.
local MODEL_SPEC = { type = "record", fields = {
    path = { type = "string", required = true },
    part = { type = "string", values = { "language", "vision" } },
} }

-- Resolves a model spec (see refit.load_model); problems with the spec itself are raised
-- at `site` as `field`.
load_model = function(spec, site, field, base_dir)
    local part
    if type(spec) == "table" and spec.kind == nil and spec.path ~= nil then
        -- A Hugging Face checkpoint with options: which part of a multimodal one.
        local s = schema.validate(spec, MODEL_SPEC, site, field)
        spec, part = s.path, s.part
    elseif type(spec) == "table" then
        if spec.kind ~= "model" then
            schema.raise(site, field, "expected a model name, a path, { path = ..., part = "
                .. "... } or a model built by transformer.dense{...} or transformer.moe{...}")
        end
        -- A table may be built by hand, or changed after its constructor checked it: it is
        -- checked against the contract like every other model.
        return transformer.check(spec, site, field)
    end
    local part_field = field .. ".part"
    if spec:match("%.json$") then
        return load_json_model(resolve_path(spec, base_dir), site, field, nil, part, site,
            part_field)
    end
    local path
    if spec:match("%.lua$") or spec:find("/") then
        path = resolve_path(spec, base_dir)
    else
        path = refit.models_dir .. "/" .. spec .. ".lua"
        -- A name that names no file lists the models, the nearest first, unless it names
        -- a Hugging Face folder beside the naming file.
        local unknown = file.unknown_preset("model", spec, path, refit.models_dir, schema.suggest)
        if unknown and is_folder(resolve_path(spec, base_dir)) then
            path = resolve_path(spec, base_dir)
        elseif unknown then
            schema.raise(site, field, unknown)
        end
    end
    -- A folder (not named *.lua) is a Hugging Face snapshot or cache folder.
    if not spec:match("%.lua$") and is_folder(path) then
        local dir = path:gsub("/+$", "")
        return load_json_model(folder_config(dir, site, field), site, field,
            folder_model_name(dir), part, site, part_field)
    end
    if part then
        schema.raise(site, part_field, "only a Hugging Face config.json or folder has parts")
    end
    local model = run_model_file(path, site, field)
    if type(model) ~= "table" or model.kind ~= "model" then
        schema.raise({ file = path }, "return", "expected the file to return a model built by "
            .. "transformer.dense{...} or transformer.moe{...}, got " .. schema.describe(model))
    end
    -- The file may have changed the model its constructor returned.
    return transformer.check(model, { file = path }, "")
end

-- spec: a model name (models/<name>.lua), a path to a .lua model file, to a Hugging Face
-- config.json or to a Hugging Face folder (a snapshot, or a cache folder models--org--name),
-- a table { path = <config.json or folder>, part = "language"|"vision" } for a part of a
-- multimodal checkpoint, or a model table. Returns the normalised model. `site` and `field`
-- (optional) say where the spec was written (a study's line, "refit.model"); by default
-- errors about the spec name the spec itself, as "model".
function refit.load_model(spec, site, field)
    -- A table naming a checkpoint ({ path = ..., part = ... }) is named by its path.
    local named = type(spec) == "table" and type(spec.path) == "string" and spec.path
    site = site or { file = named or tostring(spec), line = 0, scan = false }
    field = field or "model"
    if type(spec) ~= "string" and type(spec) ~= "table" then
        schema.raise(site, field, "expected a model name, a path or a model, got "
            .. schema.describe(spec))
    end
    return load_model(spec, site, field)
end

local function context()
    return { load_model = load_model, globals = globals(), models_dir = refit.models_dir,
        hf_cache = refit.hf_cache }
end

-- Loads and normalises the scenario file at `path`.
function refit.load_scenario(path, overrides)
    return scenario.load(path, context(), overrides)
end

-- A scenario file's table as written (for studies to change and pass back). `site` and
-- `field` (optional) say where the path was written: a study's line and "refit.scenario".
-- A scenario's `sides` are read into train and infer here, so a study changes them field by
-- field (refit.with(base, { infer = { tp = 4 } })) as it does hand-written ones.
function refit.read_scenario(path, site, field)
    local raw = scenario.read(path, context(), site, field)
    if raw.sides ~= nil then
        raw = scenario.expand_sides(raw, { file = path }, dirname(path), context())
    end
    return raw
end

-- Normalises a scenario table a study built: `spec` is { table = raw, source = file,
-- line = n, base_dir = dir }. The table is copied first, so the study's own stays as it was.
function refit.load_scenario_table(spec, overrides)
    -- A table that contains itself would recurse until Lua's stack overflows.
    local function copy(t, depth)
        if type(t) ~= "table" or t.kind == "model" then
            return t
        elseif depth > 32 then
            schema.raise({ file = spec.source, line = spec.line, scan = false }, "scenario",
                "tables nest deeper than 32 levels (does one contain itself?)")
        end
        local c = {}
        for k, v in pairs(t) do
            c[k] = copy(v, depth + 1)
        end
        return c
    end
    return scenario.normalise(copy(spec.table, 0), spec.source, spec.base_dir, context(),
        overrides, spec.line)
end

-- The candidate layouts of a layout search (models/lib/search.lua) of the scenario file at
-- `spec`, or of a study's table (a spec as load_scenario_table takes it); `request` is
-- { gpus =, dtypes =, spanning = } (search.OPTIONS). The scenario is normalised first, so
-- its own faults are reported as `refit sim` reports them. Each candidate is itself a spec
-- for load_scenario_table, with its sizes beside (gpus, tp, dp, pp, ep, dtype, replicas,
-- nodes, spans).
function refit.search_layouts(spec, request)
    if type(spec) == "string" then
        spec = { table = scenario.read(spec, context()), source = spec, base_dir = dirname(spec) }
    end
    local site = { file = spec.source, line = spec.line or 0, scan = false }
    request = schema.validate(request, search.OPTIONS, site, "search")
    if spec.table.sides ~= nil then
        spec = { table = scenario.expand_sides(spec.table, site, spec.base_dir, context()),
                 source = spec.source, base_dir = spec.base_dir, line = spec.line }
    end
    local base = refit.load_scenario_table(spec)
    local out = search.layouts(spec.table, base, request)
    for _, c in ipairs(out) do
        c.source, c.base_dir, c.line = spec.source, spec.base_dir, spec.line
    end
    return out
end

-- spec: a cluster preset name (models/clusters/<name>.lua) or a path to a cluster file
-- (from the working directory). Returns the normalised cluster (one node unless the file
-- says otherwise), e.g. to list the presets.
function refit.load_cluster(spec)
    local site = { file = tostring(spec), line = 0, scan = false }
    if type(spec) ~= "string" then
        schema.raise(site, "cluster", "expected a cluster name or a path, got "
            .. schema.describe(spec))
    end
    return cluster.load(spec, site, "cluster", { models = refit.models_dir })
end

-- Maps a decoded config.json table to a model; `source` (the JSON path) is used in errors;
-- `options.part` picks the part of a multimodal checkpoint (hf.lua).
function refit.model_from_hf(config, name, source, options)
    return hf.model(config, name, source, options)
end

return refit
