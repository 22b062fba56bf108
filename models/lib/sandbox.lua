-- sandbox.lua: run model and scenario files in a restricted, strict environment.
-- Unknown global reads and global writes raise "<file>:<line>: <name>: ..." so typos fail loudly.

local schema = require("schema")

local sandbox = {}

-- Files being run, innermost last: a constructor reached by a tail call (`return
-- transformer.moe{...}`) has lost its caller's frame and takes the file from here.
local running = {}

-- The file:line of the Lua code that performed the access being reported: level 3 seen
-- from here is the function that triggered the metamethod calling `fail`.
local function fail(name, message)
    local info = debug.getinfo(3, "Sl")
    local file = info.source:sub(1, 1) == "@" and info.source:sub(2) or info.short_src
    error(string.format("%s:%d: %s: %s", file, info.currentline, name, message), 0)
end

local function names_of(t)
    local names = {}
    for k in pairs(t) do
        names[#names + 1] = k
    end
    return names
end

-- A read-only view of `t` whose missing names raise; `label` prefixes them ("math.flor").
local function strict(t, label)
    return setmetatable({}, {
        __index = function(_, key)
            local value = t[key]
            if value == nil then
                local name = label and label .. "." .. tostring(key) or tostring(key)
                fail(name, (label and "not defined" or "unknown global")
                    .. schema.suggest(tostring(key), names_of(t)))
            end
            return value
        end,
        __newindex = function(_, key)
            local name = label and label .. "." .. tostring(key) or tostring(key)
            fail(name, "assignment to a global; declare it local")
        end,
    })
end

-- Copies of the safe standard library, so a file cannot alter what the library itself uses.
local function copy(t)
    local out = {}
    for k, v in pairs(t) do
        out[k] = v
    end
    return out
end

-- The environment of one file: safe std plus `globals` (constructors, include). Tables in
-- `globals` are wrapped strict too, so `transformer.mo{}` names the missing constructor.
local function environment(globals)
    local env = {
        math = strict(copy(math), "math"),
        string = strict(copy(string), "string"),
        table = strict(copy(table), "table"),
        pairs = pairs, ipairs = ipairs, tostring = tostring, tonumber = tonumber,
        type = type, error = error, select = select,
    }
    for name, value in pairs(globals) do
        env[name] = type(value) == "table" and strict(value, name) or value
    end
    return strict(env)
end

-- Runs the Lua file at `path` in a fresh sandbox and returns its value. A file that cannot
-- be read raises at `site` (the place that named it), as `field`.
function sandbox.run(path, globals, site, field)
    local f = io.open(path, "r")
    if not f then
        schema.raise(site, field, string.format("cannot read '%s'", path))
    end
    local text = f:read("a")
    f:close()
    -- The chunk name "@path" makes Lua's own messages (syntax errors) start with path:line.
    local chunk, err = load(text, "@" .. path, "t", environment(globals))
    if not chunk then
        error(err, 0)
    end
    running[#running + 1] = path
    local ok, result = pcall(chunk)
    running[#running] = nil
    if not ok then
        error(result, 0)
    end
    return result
end

-- Where the constructor that calls this was called: a site { file, line } for schema.
-- A tail call leaves no caller frame; the line is then nil, meaning "the returned table".
function sandbox.caller()
    local constructor = debug.getinfo(2, "t")
    local caller = not constructor.istailcall and debug.getinfo(3, "Sl")
    if not caller then
        return { file = running[#running] or "?", line = nil }
    end
    if caller.source:sub(1, 1) == "@" then
        return { file = caller.source:sub(2), line = caller.currentline }
    end
    -- A chunk loaded from a string has no file to rescan.
    return { file = caller.short_src, line = caller.currentline, scan = false }
end

return sandbox
