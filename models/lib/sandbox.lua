-- sandbox.lua: run model and scenario files in a restricted, strict environment.
-- Unknown global reads and global writes raise "<file>:<line>: <name>: ..." so typos fail loudly.

local schema = require("schema")
local file = require("file")

local sandbox = {}

-- "@<models>/lib/": frames of the library's own files, which an error about the user's
-- code should look past.
local lib_source = debug.getinfo(1, "S").source:match("^(@.*/)[^/]*$")

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

-- Where an error was raised, seen from a message handler (level 1 is this function, 2 the
-- handler): the innermost frame of a user's file, else (unless user_only) the innermost Lua
-- frame. The walk stops after 100 frames (each getinfo walks the stack: quadratic).
local function raise_site(user_only)
    local fallback
    for level = 3, 102 do
        local info = debug.getinfo(level, "Sl")
        if not info then
            break
        end
        if info.currentline > 0 then
            local named = info.source:sub(1, 1) == "@"
            local where = { named and info.source:sub(2) or info.short_src, info.currentline }
            if named and (not lib_source or info.source:sub(1, #lib_source) ~= lib_source) then
                return where
            end
            fallback = fallback or where
        end
    end
    return not user_only and fallback or nil
end

-- Lua cuts a chunk name longer than 60 bytes to "..." and its last 56 in the messages it
-- writes itself (syntax and runtime errors); put back the whole path, one a user can open,
-- from the frames on the stack and the files being run (paths, may be nil).
local function whole_name(err, paths)
    local tail = err:match("^%.%.%.([^\n]-):%d+: ")
    if not tail then
        return err
    end
    local function ends(path)
        return path and #path > #tail and path:sub(-#tail) == tail
    end
    for _, path in ipairs(paths or {}) do
        if ends(path) then
            return path .. err:sub(#tail + 4)
        end
    end
    for level = 2, 102 do
        local info = debug.getinfo(level, "S")
        if not info then
            break
        end
        local path = info.source:sub(1, 1) == "@" and info.source:sub(2)
        if ends(path) then
            return path .. err:sub(#tail + 4)
        end
    end
    for i = #running, 1, -1 do
        if ends(running[i]) then
            return running[i] .. err:sub(#tail + 4)
        end
    end
    return err
end

local function describe_object(value)
    local kind = type(value)
    if kind == "nil" then
        return "nil"
    elseif kind == "number" or kind == "boolean" then
        return string.format("the %s %s", kind, tostring(value))
    end
    return "a " .. kind
end

-- The message handler of every protected call into descriptions (sandbox.run, and the C
-- side's calls): any error value becomes one line that starts with the file and line where
-- it was raised. error({}), error(nil) or error(42) would otherwise reach the user as
-- "error object is not a string", and error("text", 0) with no place at all.
function sandbox.message(err)
    if type(err) == "string" then
        err = whole_name((err:gsub("%s*\n%s*", " ")))
        if err:find("^[^\n]-:%d+: ") then
            return err -- already says where
        end
        -- A place is added only for user code: the library words its own messages.
        local site = raise_site(true)
        if site and err:sub(1, #site[1] + 1) ~= site[1] .. ":" then
            return string.format("%s:%d: %s", site[1], site[2], err)
        end
        return err
    end
    local text = "error object is " .. describe_object(err) .. " (error() should be given a string)"
    local site = raise_site()
    return site and string.format("%s:%d: %s", site[1], site[2], text) or text
end

-- The text of the file at `path`, through the one reader (file.lua). A file that cannot be
-- read raises at `site` (the place that named it) as `field`: "site:line: field: path:
-- reason"; a path given on the command line (site.file is the path, line 0) has no site
-- to name and raises "path: reason".
function sandbox.read(path, site, field)
    local text, reason = file.read(path)
    if not text then
        if site.file == path and (site.line or 0) == 0 then
            error(string.format("%s: %s", path, reason), 0)
        end
        schema.raise(site, field, string.format("%s: %s", path, reason))
    end
    return text
end

-- Runs the Lua file at `path` in a fresh sandbox and returns its value. A file that cannot
-- be read raises at `site` (the place that named it), as `field`.
function sandbox.run(path, globals, site, field)
    local text = sandbox.read(path, site, field)
    -- The chunk name "@path" makes Lua's own messages (syntax errors) start with path:line.
    local chunk, err = load(text, "@" .. path, "t", environment(globals))
    if not chunk then
        err = whole_name(err, { path })
        -- Lua's parser says where, except when the nesting exhausts its C levels: then
        -- the message handler of an including file may even have put that file's line.
        if err:sub(1, #path + 1) ~= path .. ":" then
            err = string.format("%s: %s", path, err:find("stack overflow", 1, true)
                and "brackets or blocks nested too deeply for Lua's parser" or err)
        end
        error(err, 0)
    end
    running[#running + 1] = path
    local ok, result = xpcall(chunk, sandbox.message)
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
