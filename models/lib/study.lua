-- study.lua: the `refit` module of what-if studies (`refit run STUDY.lua`). A study builds
-- scenarios from others with overrides, plans and simulates them (every run stored in the
-- database with its label) and prints tables a planner reads in ten seconds.

local sandbox = require("sandbox")
local schema = require("schema")
local policy = require("policy")
local search = require("search")

local study = {}

-- The dry pass's value (Distribution, below): copies and merges keep it as it is.
local DRY

local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
end

-- Scenario tables nest a few levels; deeper means a table that contains itself, which
-- would recurse until Lua's stack overflows. Returns nil for such a table.
local MAX_DEPTH = 32

local function deep_copy(t, depth)
    depth = depth or 0
    if type(t) ~= "table" or rawequal(t, DRY) or t.kind == "model" then
        return t
    elseif depth > MAX_DEPTH then
        return nil, true
    end
    local c = {}
    for k, v in pairs(t) do
        local copy, cyclic = deep_copy(v, depth + 1)
        if cyclic then
            return nil, true
        end
        c[k] = copy
    end
    return c
end

-- Formats a value for a table cell: integers with thousands apart, numbers to 3 digits.
local function cell(v, fmt)
    if v == nil then
        return "-"
    end
    if fmt then
        return string.format(fmt, v)
    end
    if math.type(v) == "float" then
        return string.format("%.3f", v)
    end
    return tostring(v)
end

-- Distribution (`refit run --jobs N`, `mpirun -np N refit run`; sim/cmd_run_dist.c). The
-- study runs three times, each with the same code:
-- - dry: every refit.plan, refit.sim and refit.search is recorded as a point, numbered in
--   call order, and answers a dry value that absorbs whatever the study does with it
--   (fields, arithmetic, formatting); nothing is printed, planned or stored. The pass ends
--   at the first error, at a call whose arguments hold a dry value (a point chosen from an
--   earlier result cannot be known before it), or after MAX_POINTS points.
-- - work: each rank computes its share of the recorded points into its own database and
--   keeps each point's result, serialized (dist.compute).
-- - replay, on rank 0 alone: the study runs as it would serially. A call whose number and
--   fingerprint (its arguments, serialized) match a recorded point takes that point's
--   runs from its rank's database, in study order, and its result (run ids renumbered);
--   any other call is computed there and then. So a replay prints and stores exactly what
--   a serial run does, whatever the study does with its results.
local MAX_POINTS = 10000
local DRY_STOP = setmetatable({}, { __tostring = function() return "dry pass ends" end })

local dry_mt = {}
DRY = setmetatable({}, dry_mt)
local function is_dry(v)
    return rawequal(v, DRY)
end
dry_mt.__index = function(_, k)
    -- A list ends at once (ipairs, #): a dry result lists nothing.
    if math.type(k) == "integer" then
        return nil
    end
    return DRY
end
dry_mt.__newindex = function() end
for _, op in ipairs({ "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__idiv",
    "__band", "__bor", "__bxor", "__shl", "__shr", "__bnot", "__concat", "__call" }) do
    dry_mt[op] = function()
        return DRY
    end
end
dry_mt.__len = function()
    return 0
end
dry_mt.__lt = function()
    return false
end
dry_mt.__le = function()
    return false
end
dry_mt.__tostring = function()
    return "?"
end

-- Does v hold a dry value (depth-bounded: scenario tables are free of cycles)?
local function holds_dry(v, depth)
    if is_dry(v) then
        return true
    elseif type(v) ~= "table" or (depth or 0) > MAX_DEPTH then
        return false
    end
    for k, x in pairs(v) do
        if holds_dry(k, (depth or 0) + 1) or holds_dry(x, (depth or 0) + 1) then
            return true
        end
    end
    return false
end

-- math and string.format for the dry pass: a dry argument makes a dry answer.
local function dry_library(lib, names)
    local c = {}
    for k, f in pairs(lib) do
        c[k] = f
    end
    for _, name in ipairs(names) do
        local f = lib[name]
        c[name] = function(...)
            for i = 1, select("#", ...) do
                if is_dry((select(i, ...))) then
                    return name == "format" and "?" or DRY
                end
            end
            return f(...)
        end
    end
    return c
end

-- Values as Lua text that load() reads back exactly: integers in decimal, floats in hex
-- (%a: every bit), strings quoted, tables with their keys sorted, so that equal values
-- give equal text (the fingerprint of a call). nil and an error for what has no text (a
-- function, a table nested past MAX_DEPTH).
local function serialize(v)
    local out = {}
    local function put(x, depth)
        local t = type(x)
        if t == "number" then
            if math.type(x) == "integer" then
                out[#out + 1] = string.format("%d", x)
            elseif x ~= x then
                out[#out + 1] = "(0/0)"
            elseif x == math.huge or x == -math.huge then
                out[#out + 1] = x > 0 and "(1/0)" or "(-1/0)"
            else
                out[#out + 1] = string.format("%a", x)
            end
        elseif t == "string" then
            out[#out + 1] = string.format("%q", x)
        elseif t == "boolean" then
            out[#out + 1] = tostring(x)
        elseif t == "table" and depth <= MAX_DEPTH and getmetatable(x) == nil then
            local keys = {}
            for k in pairs(x) do
                local kt = type(k)
                if kt ~= "string" and kt ~= "number" then
                    error("a key of type " .. kt)
                end
                keys[#keys + 1] = k
            end
            table.sort(keys, function(a, b)
                local ta, tb = type(a), type(b)
                if ta ~= tb then
                    return ta == "number"
                end
                return a < b
            end)
            out[#out + 1] = "{"
            for _, k in ipairs(keys) do
                out[#out + 1] = "["
                put(k, depth + 1)
                out[#out + 1] = "]="
                put(x[k], depth + 1)
                out[#out + 1] = ","
            end
            out[#out + 1] = "}"
        else
            error("a value of type " .. t)
        end
    end
    local ok = pcall(put, v, 0)
    return ok and table.concat(out) or nil
end
study.serialize = serialize

local function deserialize(text)
    return assert(load("return " .. text, "=result", "t", {}))()
end

-- Replaces each run_id in a result (at any depth) by the id its run was stored under.
local function renumber(v, ids, depth)
    if type(v) ~= "table" or depth > MAX_DEPTH then
        return
    end
    for k, x in pairs(v) do
        if k == "run_id" and math.type(x) == "integer" and ids[x] then
            v[k] = ids[x]
        else
            renumber(x, ids, depth + 1)
        end
    end
end

-- The options of refit.plan and refit.sim.
local OPTIONS = { type = "record", fields = {
    strategy = { type = "string", values = policy.strategies },
    label = { type = "string" },
} }

-- A column of refit.table: a key, or { key, header =, format =, scale = } (the key is
-- checked apart: it is written positionally).
local COLUMN = { type = "record", fields = {
    header = { type = "string" },
    format = { type = "string" },
    scale = { type = "number" },
} }

-- Runs the study at `path`; `lib` is the refit module (scenario loading), `api` the C call
-- api(spec, strategy, label, simulate) -> result table, `search_api` (optional) the C calls
-- { search = fn(spec, options), estimate = fn(spec, strategy) } (sim/search_lua.c),
-- `table_api` (optional) the C call table_api(title, headers, rows, text) that stores what
-- refit.table printed (sim/study_table_lua.c), `dist` (optional) the distributed pass:
-- { mode = "dry" } gets dist.points (each { fp = text }) and dist.compute(k) -> the
-- serialized result of point k; { mode = "replay", take = fn(k, fp) -> nil or the point's
-- serialized result and its run ids' renumbering } replays (see Distribution above).
function study.run(path, lib, api, search_api, table_api, dist)
    local dry = dist and dist.mode == "dry"
    local replay = dist and dist.mode == "replay"
    local calls = 0
    local points = {}
    local dir = dirname(path)
    -- The directory each scenario table came from, for its relative model and cluster paths.
    local origin = setmetatable({}, { __mode = "k" })
    local R = {}

    -- The study line that called into the module: the innermost frame running the study
    -- file (the study may call through functions of its own). 0 when a tail call lost it.
    local function line()
        for level = 2, math.huge do
            local info = debug.getinfo(level, "Sl")
            if not info then
                return 0
            elseif info.source == "@" .. path then
                return info.currentline
            end
        end
    end

    -- A site at the calling study line, for errors about the arguments of refit.<fn>.
    local function here()
        return { file = path, line = line(), scan = false }
    end

    local function fail(field, message)
        schema.raise(here(), field, message)
    end

    local function resolve(p)
        return p:sub(1, 1) == "/" and p or dir .. "/" .. p
    end

    local function spec(sc, what)
        if type(sc) == "string" then
            return { path = resolve(sc) }
        elseif type(sc) == "table" then
            return { table = sc, source = path, line = line(), base_dir = origin[sc] or dir }
        end
        fail("refit." .. what, "expected a scenario table or a path, got " .. schema.describe(sc))
    end

    local function options(opts, what)
        if opts ~= nil and type(opts) ~= "table" then
            fail("refit." .. what, "expected a table of options { strategy =, label = } as the "
                .. "second argument, got " .. schema.describe(opts))
        end
        return schema.validate(opts or {}, OPTIONS, here(), "refit." .. what .. ".options")
    end

    -- refit.scenario(path): a scenario file's table as written, to change and pass on.
    function R.scenario(p)
        if type(p) ~= "string" then
            fail("refit.scenario", "expected the path of a scenario file, got "
                .. schema.describe(p))
        end
        local full = resolve(p)
        local t = lib.read_scenario(full, here(), "refit.scenario")
        origin[t] = dirname(full)
        return t
    end

    -- refit.with(base, overrides): a copy of base with overrides merged in, nested tables
    -- merged key by key (`{ infer = { gpus = 512 } }` keeps infer's other fields).
    function R.with(base, overrides)
        if type(base) ~= "table" then
            fail("refit.with", "expected a scenario table as the base, got "
                .. schema.describe(base))
        elseif overrides ~= nil and type(overrides) ~= "table" then
            fail("refit.with", "expected a table of overrides, got " .. schema.describe(overrides))
        end
        local function copy(v)
            local c, cyclic = deep_copy(v)
            if cyclic then
                fail("refit.with", string.format("tables nest deeper than %d levels (does "
                    .. "one contain itself?)", MAX_DEPTH))
            end
            return c
        end
        -- Both copies are free of cycles, so the merge ends.
        local function merge(a, b)
            for k, v in pairs(b) do
                if type(v) == "table" and type(a[k]) == "table" and not rawequal(v, DRY)
                    and v.kind ~= "model" then
                    merge(a[k], v)
                else
                    a[k] = v
                end
            end
            return a
        end
        local t = merge(copy(base), copy(overrides or {}))
        origin[t] = origin[base]
        return t
    end

    -- refit.plan(scenario [, { strategy =, label = }]) and refit.sim(...): plan (and
    -- simulate) and store one run; return its figures (run_id, predicted_s, ...).
    -- One point of the study: run(), or as the distributed pass says (Distribution above).
    -- args are what identifies it (fingerprint).
    local function point(args, run)
        calls = calls + 1
        if dry then
            if holds_dry(args) or #points >= MAX_POINTS then
                error(DRY_STOP, 0)
            end
            -- The arguments as they are now (the study may change its tables after the
            -- call): their text, read back, is the point's own copy.
            local fp = serialize(args)
            if fp then
                points[#points + 1] = { k = calls, fp = fp, run = run, args = deserialize(fp) }
            end
            return DRY
        elseif replay then
            local fp = serialize(args)
            if fp then
                local text, ids = dist.take(calls, fp)
                if text then
                    local r = deserialize(text)
                    renumber(r, ids, 0)
                    return r
                end
            end
        end
        return run(args)
    end

    function R.plan(sc, opts)
        local s, o = spec(sc, "plan"), options(opts, "plan")
        return point({ "plan", s, o.strategy, o.label }, function(a)
            return api(a[2], a[3], a[4], false)
        end)
    end

    function R.sim(sc, opts)
        local s, o = spec(sc, "sim"), options(opts, "sim")
        return point({ "sim", s, o.strategy, o.label }, function(a)
            return api(a[2], a[3], a[4], true)
        end)
    end

    -- refit.search(scenario [, { gpus =, dtypes =, pp =, top =, label =, strategy =,
    -- spanning = }]): the layout search of `refit search` (README, Layout search): the
    -- layouts that fit, ranked, the best `top` simulated and stored. Returns { enumerated,
    -- fit, simulated, layouts = { { rank, layout, gpus, tp, dp, pp, ep, engines, dtype,
    -- weights_bytes, kv_headroom_bytes, bound_s, estimate_s, simulated, predicted_s,
    -- run_id, ... } } }.
    function R.search(sc, opts)
        local s = spec(sc, "search")
        if opts ~= nil and type(opts) ~= "table" then
            fail("refit.search", "expected a table of options { gpus =, dtypes =, pp =, top =, "
                .. "label =, strategy =, spanning = } as the second argument, got "
                .. schema.describe(opts))
        end
        local o = schema.validate(opts or {}, search.OPTIONS, here(), "refit.search.options")
        if o.label and not utf8.len(o.label) then
            fail("refit.search.options.label", "not valid UTF-8 (a label is stored as text)")
        end
        if not search_api then
            fail("refit.search", "not available outside `refit run`")
        end
        return point({ "search", s, o }, function(a)
            return search_api.search(a[2], a[3])
        end)
    end

    -- refit.estimate(scenario [, { strategy = }]): what the search knows of one scenario
    -- without simulating or storing it: { fits, train_fits, weights_bytes,
    -- kv_headroom_bytes, bound_s, estimate_s, estimated_as } (the last three when it fits).
    function R.estimate(sc, opts)
        local s, o = spec(sc, "estimate"), options(opts, "estimate")
        if o.label then
            fail("refit.estimate.options.label", "an estimate is not stored, so it has no label")
        end
        if not search_api then
            fail("refit.estimate", "not available outside `refit run`")
        end
        if dry then
            return DRY
        end
        return search_api.estimate(s, o.strategy)
    end

    -- refit.model(name): { name, params, active_params, bf16_bytes } of a model.
    function R.model(name)
        if type(name) ~= "string" and type(name) ~= "table" then
            fail("refit.model", "expected a model name, a path or a model, got "
                .. schema.describe(name))
        end
        local m = lib.load_model(name, here(), "refit.model")
        local total, active, bytes = 0, 0, 0
        for _, t in ipairs(m.tensors) do
            local n = 1
            for _, d in ipairs(t.shape) do
                n = n * d
            end
            total = total + n
            bytes = bytes + n * (t.dtype == "fp32" and 4 or 2)
            active = active + (t.experts > 0 and n * m.experts_per_token // t.experts or n)
        end
        return { name = m.name, params = total, active_params = active, bf16_bytes = bytes }
    end

    -- refit.table(rows, columns [, title]): prints rows as aligned columns. A column is a
    -- key, or { key, header = "...", format = "%.2f", scale = 1e-9 }.
    function R.table(rows, columns, title)
        if dry then
            return
        end
        local site = here()
        schema.validate(rows, { type = "list", items = { type = "table" } }, site,
            "refit.table.rows")
        schema.validate(columns, { type = "list", min_items = 1,
            items = { type = { "string", "table" } } }, site, "refit.table.columns")
        schema.validate(title, { type = "string" }, site, "refit.table.title")
        local cols = {}
        for i, c in ipairs(columns) do
            local field = "refit.table.columns." .. i
            if type(c) == "string" then
                c = { c }
            end
            local key, named = c[1], {}
            if type(key) ~= "string" then
                schema.raise(site, field .. ".1", "expected the key of the rows to show (a "
                    .. "string), got " .. schema.describe(key))
            end
            for k, v in pairs(c) do
                if k ~= 1 then
                    named[k] = v
                end
            end
            named = schema.validate(named, COLUMN, site, field)
            cols[i] = { key = key, header = named.header or key, format = named.format,
                        scale = named.scale, field = field }
        end
        local lines = {}
        local header = {}
        for i, c in ipairs(cols) do
            header[i] = c.header
        end
        lines[1] = header
        for _, row in ipairs(rows) do
            local line = {}
            for i, c in ipairs(cols) do
                local v = row[c.key]
                if c.scale and type(v) == "number" then
                    v = v * c.scale
                end
                local ok, text = pcall(cell, v, c.format)
                if not ok then
                    schema.raise(site, c.field .. ".format", string.format(
                        "'%s' cannot format %s: %s", c.format, schema.describe(v),
                        tostring(text):gsub("^.-:%d+: ", "")))
                end
                line[i] = text
            end
            lines[#lines + 1] = line
        end
        local width = {}
        for _, line in ipairs(lines) do
            for i, v in ipairs(line) do
                width[i] = math.max(width[i] or 0, #v)
            end
        end
        -- What is printed is also kept, line by line, to be stored exactly as printed.
        local printed = {}
        local function emit(text)
            print(text)
            printed[#printed + 1] = text .. "\n"
        end
        if title then
            emit(title)
        end
        for _, line in ipairs(lines) do
            local out = {}
            for i, v in ipairs(line) do
                -- Text left-aligned, numbers right-aligned.
                local numeric = v:match("^[-%d.,e+]+$") ~= nil
                local pad = string.rep(" ", width[i] - #v)
                out[i] = numeric and pad .. v or (i < #line and v .. pad or v)
            end
            emit(table.concat(out, "  "))
        end
        emit("")
        if table_api then
            -- A table is stored as text and JSON, which must be UTF-8; checked after it is
            -- printed, so the user sees the table the error is about.
            if title and not utf8.len(title) then
                schema.raise(site, "refit.table.title", "not valid UTF-8 (a table is stored "
                    .. "as text)")
            end
            for r, line in ipairs(lines) do
                for i, v in ipairs(line) do
                    if not utf8.len(v) then
                        schema.raise(site, r == 1 and ("refit.table.columns." .. i .. ".header")
                            or string.format("refit.table.rows.%d.%s", r - 1, cols[i].key),
                            "not valid UTF-8 (a table is stored as text)")
                    end
                end
            end
            local body = {}
            for r = 2, #lines do
                body[r - 1] = lines[r]
            end
            table_api(title, header, body, table.concat(printed))
        end
    end

    -- refit.progress(fmt, ...): a line on stderr (the C side prints one per run too).
    function R.progress(fmt, ...)
        if dry then
            return
        end
        local ok, text = pcall(string.format, fmt, ...)
        if not ok then
            fail("refit.progress", tostring(text))
        end
        io.stderr:write(text, "\n")
    end

    local site = { file = path, line = 0, scan = false }
    if not dry then
        sandbox.run(path, { refit = R, print = print, string = string }, site, "study")
        return
    end
    -- The dry pass: what it recorded before it ended stands, however it ended.
    pcall(sandbox.run, path, { refit = R, print = function() end,
        string = dry_library(string, { "format", "rep" }),
        math = dry_library(math, { "abs", "ceil", "floor", "fmod", "max", "min", "sqrt",
            "exp", "log", "tointeger", "modf" }) }, site, "study")
    dist.points = {}
    for i, p in ipairs(points) do
        dist.points[i] = { k = p.k, fp = p.fp }
    end
    function dist.compute(i)
        return serialize(points[i].run(points[i].args)) or error("point " .. i .. ": its result has no text")
    end
end

return study
