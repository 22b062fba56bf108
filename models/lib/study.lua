-- study.lua: the `refit` module of what-if studies (`refit run STUDY.lua`). A study builds
-- scenarios from others with overrides, plans and simulates them (every run stored in the
-- database with its label) and prints tables a planner reads in ten seconds.

local sandbox = require("sandbox")
local schema = require("schema")

local study = {}

local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
end

local function deep_copy(t)
    if type(t) ~= "table" or t.kind == "model" then
        return t
    end
    local c = {}
    for k, v in pairs(t) do
        c[k] = deep_copy(v)
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

-- Runs the study at `path`; `lib` is the refit module (scenario loading), `api` the C call
-- api(spec, strategy, label, simulate) -> result table.
function study.run(path, lib, api)
    local dir = dirname(path)
    -- The directory each scenario table came from, for its relative model and cluster paths.
    local origin = setmetatable({}, { __mode = "k" })
    local R = {}

    local function resolve(p)
        return p:sub(1, 1) == "/" and p or dir .. "/" .. p
    end

    local function spec(sc, what)
        if type(sc) == "string" then
            return { path = resolve(sc) }
        elseif type(sc) == "table" then
            local info = debug.getinfo(3, "l")
            return { table = sc, source = path, line = info and info.currentline or 0,
                     base_dir = origin[sc] or dir }
        end
        error(string.format("%s: refit.%s: expected a scenario table or path, got %s", path,
            what, schema.describe(sc)), 0)
    end

    -- refit.scenario(path): a scenario file's table as written, to change and pass on.
    function R.scenario(p)
        local full = resolve(p)
        local t = lib.read_scenario(full)
        origin[t] = dirname(full)
        return t
    end

    -- refit.with(base, overrides): a copy of base with overrides merged in, nested tables
    -- merged key by key (`{ infer = { gpus = 512 } }` keeps infer's other fields).
    function R.with(base, overrides)
        local function merge(a, b)
            for k, v in pairs(b) do
                if type(v) == "table" and type(a[k]) == "table" and v.kind ~= "model" then
                    merge(a[k], v)
                else
                    a[k] = deep_copy(v)
                end
            end
            return a
        end
        local t = merge(deep_copy(base), overrides or {})
        origin[t] = origin[base]
        return t
    end

    -- refit.plan(scenario [, { strategy =, label = }]) and refit.sim(...): plan (and
    -- simulate) and store one run; return its figures (run_id, predicted_s, ...).
    function R.plan(sc, opts)
        opts = opts or {}
        return api(spec(sc, "plan"), opts.strategy, opts.label, false)
    end

    function R.sim(sc, opts)
        opts = opts or {}
        return api(spec(sc, "sim"), opts.strategy, opts.label, true)
    end

    -- refit.model(name): { name, params, active_params, bf16_bytes } of a model.
    function R.model(name)
        local m = lib.load_model(name)
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
        local cols = {}
        for i, c in ipairs(columns) do
            if type(c) == "string" then
                c = { c }
            end
            cols[i] = { key = c[1], header = c.header or c[1], format = c.format,
                        scale = c.scale }
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
                line[i] = cell(v, c.format)
            end
            lines[#lines + 1] = line
        end
        local width = {}
        for _, line in ipairs(lines) do
            for i, v in ipairs(line) do
                width[i] = math.max(width[i] or 0, #v)
            end
        end
        if title then
            print(title)
        end
        for _, line in ipairs(lines) do
            local out = {}
            for i, v in ipairs(line) do
                -- Text left-aligned, numbers right-aligned.
                local numeric = v:match("^[-%d.,e+]+$") ~= nil
                local pad = string.rep(" ", width[i] - #v)
                out[i] = numeric and pad .. v or (i < #line and v .. pad or v)
            end
            print(table.concat(out, "  "))
        end
        print()
    end

    -- refit.progress(fmt, ...): a line on stderr (the C side prints one per run too).
    function R.progress(fmt, ...)
        io.stderr:write(string.format(fmt, ...), "\n")
    end

    sandbox.run(path, { refit = R, print = print, string = string },
        { file = path, line = 0, scan = false }, "study")
end

return study
