-- file.lua: the one reader of every file the library reads (scenario, model, cluster and
-- study files, config.json, locate's rescans). read(path) -> text, or nil and a reason.

local file = {}

-- The refit command preloads refit.file (sim/sandbox.c): it stats the path before opening
-- it and reads regular files of at most 16 MiB only, so /dev/zero or a FIFO cannot hang
-- refit or fill its memory. Plain lua5.4 (the Lua tests) gets the same rules as far as the
-- io library can tell them.
local has_native, native = pcall(require, "refit.file")
file.limit = has_native and native.limit or 16 * 1024 * 1024

local function too_large(size)
    return string.format("is %d bytes, more than the %d MiB refit reads", size,
        file.limit // (1024 * 1024))
end

-- "Is a directory" -> "is a directory", as the C reader words it.
local function lower_first(reason)
    return (reason:gsub("^%u", string.lower))
end

local function read_with_io(path)
    local f, err = io.open(path, "rb")
    if not f then
        -- io.open says "<path>: <reason>"; the caller names the path itself.
        local prefix = path .. ": "
        if err:sub(1, #prefix) == prefix then
            err = err:sub(#prefix + 1)
        end
        return nil, lower_first(err)
    end
    -- Reading nothing says whether the path can be read at all (a directory cannot).
    local _, perr = f:read(0)
    if perr then
        f:close()
        return nil, lower_first(perr)
    end
    local size = f:seek("end")
    if size and size > file.limit then
        f:close()
        return nil, too_large(size)
    end
    f:seek("set")
    local text, rerr = f:read(file.limit + 1)
    f:close()
    if rerr then
        return nil, lower_first(rerr)
    elseif not text then
        return "" -- nil without a reason: the end of an empty file
    end
    if #text > file.limit then
        return nil, string.format("is more than the %d MiB refit reads",
            file.limit // (1024 * 1024))
    end
    return text
end

file.read = has_native and native.read or read_with_io

-- kind(path) -> "file", "dir" or "other", or nil and a reason, without opening the path
-- (a FIFO would block an open). Plain lua5.4 can only try: an opened path that reads is a
-- file, one that cannot be read is taken as a folder.
local function kind_with_io(path)
    local f, err = io.open(path, "rb")
    if not f then
        return nil, err
    end
    local _, perr = f:read(0)
    f:close()
    return perr and "dir" or "file"
end
file.kind = has_native and native.kind or kind_with_io

-- Whether a spec names a preset (a bare name) rather than a file (ending in .lua or holding
-- a '/'), and the path it names: <models>/<folder>/<name>.lua for a preset, else the file
-- taken from dirs.base (the naming file's directory) unless absolute. Cluster and framework
-- specs resolve the same way.
function file.is_preset(spec)
    return not spec:match("%.lua$") and not spec:find("/")
end

function file.spec_path(spec, folder, dirs)
    if file.is_preset(spec) then
        return (dirs.models or "models") .. "/" .. folder .. "/" .. spec .. ".lua"
    end
    if dirs.base and spec:sub(1, 1) ~= "/" then
        return dirs.base .. "/" .. spec
    end
    return spec
end

-- The names of folder's *.lua files without the suffix, sorted; {} when it cannot be listed.
-- Plain lua5.4 (the Lua tests) has no way to list a folder but ls.
local function list_with_ls(folder)
    local quoted = "'" .. folder:gsub("'", "'\\''") .. "'"
    local p = io.popen and io.popen("ls -1 " .. quoted .. " 2>/dev/null")
    if not p then
        return nil
    end
    local names = {}
    for line in p:lines() do
        local name = line:match("^([^.].*)%.lua$")
        if name then
            names[#names + 1] = name
        end
    end
    p:close()
    return names
end

function file.presets(folder)
    local names = (has_native and native.list or list_with_ls)(folder) or {}
    table.sort(names)
    return names
end

-- The names of folder's subfolders, sorted, or nil and a reason when folder is not a folder
-- (what tells a Hugging Face folder from a model file, and lists a cache's snapshots).
-- Plain lua5.4 asks ls, whose -p marks folders with a trailing '/'; listing "folder/"
-- fails unless folder is one.
local function subdirs_with_ls(folder)
    local quoted = "'" .. folder:gsub("'", "'\\''") .. "/'"
    local p = io.popen and io.popen("ls -1 -p -- " .. quoted .. " 2>/dev/null")
    if not p then
        return nil, "cannot be listed"
    end
    local names = {}
    for line in p:lines() do
        local name = line:match("^([^.].*)/$")
        if name then
            names[#names + 1] = name
        end
    end
    if not p:close() then
        return nil, "not a directory"
    end
    return names
end

function file.subdirs(folder)
    local names, reason
    if has_native then
        names, reason = native.list(folder, "dirs")
    else
        names, reason = subdirs_with_ls(folder)
    end
    if names then
        table.sort(names)
    end
    return names, reason
end

-- A preset name whose file does not exist: the reason, with the nearest preset and every
-- one ("unknown cluster 'dgx-h10' (did you mean 'dgx-h100'?): ... the presets are ..."), or
-- nil when path exists (its own read says what else is wrong). `suggest` is
-- schema.suggest, passed in: schema requires this module (through locate).
function file.unknown_preset(kind, spec, path, folder, suggest)
    local f, _, code = io.open(path, "rb")
    if f then
        f:close()
        return nil
    end
    -- ENOENT only: a file that exists but cannot be read keeps its own reason.
    if code ~= 2 then
        return nil
    end
    local names, quoted = file.presets(folder), {}
    for i, n in ipairs(names) do
        quoted[i] = string.format("'%s'", n)
    end
    return string.format("unknown %s '%s'%s: there is no %s; the %ss refit ships are %s, or "
        .. "give the path of a %s file", kind, spec, suggest(spec, names), path, kind,
        #quoted > 0 and table.concat(quoted, ", ") or "(none found)", kind)
end

return file
