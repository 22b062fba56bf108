-- compose.lua: an RL framework's YAML config composed as the framework composes it, before
-- rlconfig.lua reads its keys: NeMo RL's `defaults:` inheritance and Hydra's defaults lists
-- (verl), with OmegaConf's merge semantics, then the command line's overrides.
--
-- Two forms of `defaults:` meet here, told apart entry by entry:
--   * a file name ending in .yaml/.yml (`defaults: ../../grpo_math_1B.yaml`): NeMo RL's
--     load_config_with_inheritance (nemo_rl/utils/config.py, NVIDIA-NeMo/RL @ 7ea279ab): the
--     parent's keys, relative to the naming file's folder, overridden by the file's own;
--   * Hydra's entries (https://hydra.cc/docs/1.3/advanced/defaults_list/, the form verl's
--     verl/trainer/config/*.yaml use, volcengine/verl @ b178a3cd): `_self_`; a config name
--     (`actor`, `server/apache`, `reward_manager@reward_manager`); a group default
--     (`actor@actor_rollout_ref.actor: dp_actor`, `../optim@optim: fsdp`) with `override`,
--     `optional`, a list of options or null. A group path is relative to the naming config's
--     group (absolute with a leading /); a package is relative to the naming config's package
--     (Hydra's "overriding packages" page), and a config without one lands at its group path
--     below the naming config's package. `# @package X` at the top of a file is honoured. A
--     config is looked up in the primary config's folder, then in each of its
--     `hydra.searchpath` entries (file://dir taken from the working directory, as Hydra does,
--     then from each folder above the primary config, where a user runs verl from its
--     repository's root; pkg://a.b as the folder a/b found the same way).
-- The file itself merges where `_self_` stands, at the end when it is not listed (Hydra
-- 1.1's order, and NeMo RL's).
--
-- OmegaConf's merge (OmegaConf.merge): mappings merge key by key, anything else (lists
-- included) replaces. Every merged value is a copy, so nothing composed shares storage: a
-- child's override of one section never writes through to another (the YAML decoder
-- already copies aliases, sim/yaml_lua.c).
--
-- Bounds: a composition uses at most MAX_CONFIGS configs (a config named again counts
-- again: fifteen levels of four duplicate parents would be 4^15 uses), and each file is
-- read and decoded once however often it is named.

local schema = require("schema")
local sandbox = require("sandbox")
local file = require("file")

local compose = {}

local MAX_CONFIGS = 256
local MAX_DEPTH = 16

local yaml_ok, yaml = pcall(require, "refit.yaml")
compose.NULL = yaml_ok and yaml.null or nil
local NULL = compose.NULL

local function is_mapping(v)
    return type(v) == "table" and v[1] == nil
end
compose.is_mapping = is_mapping

-- How a YAML value is shown after "got": as YAML writes it, strings in double quotes.
function compose.describe(v)
    if v == NULL then
        return "null"
    elseif type(v) == "string" then
        return string.format('"%s"', v)
    elseif type(v) == "table" then
        return next(v) == nil and "{}" or (v[1] ~= nil and "a list" or "a mapping")
    elseif math.type(v) == "float" and v == v then
        -- As the file wrote it: `tp: 2.0` is a float to YAML and to the framework, so it
        -- shows as 2.0, not as the integer it equals.
        return tostring(v)
    end
    return schema.describe(v)
end
local describe = compose.describe

local function copy(v)
    if type(v) ~= "table" then
        return v
    end
    local out = {}
    for k, x in pairs(v) do
        out[k] = copy(x)
    end
    return out
end

-- OmegaConf.merge of src into dst (which this composition owns).
local function merge(dst, src)
    for k, v in pairs(src) do
        if is_mapping(v) and is_mapping(dst[k]) then
            merge(dst[k], v)
        else
            dst[k] = copy(v)
        end
    end
end

local function dirname(path)
    return path:match("^(.*)/[^/]*$") or "."
end

local function join(dir, path)
    if path:sub(1, 1) == "/" or dir == "." then
        return path
    end
    return dir .. "/" .. path
end

-- "a/./b/../c" -> "a/c"; nil when it climbs above its start (a group outside the root).
local function normalise(path)
    local parts = {}
    for part in path:gmatch("[^/]+") do
        if part == ".." then
            if #parts == 0 then
                return nil
            end
            parts[#parts] = nil
        elseif part ~= "." then
            parts[#parts + 1] = part
        end
    end
    return table.concat(parts, "/")
end

local function is_file(path)
    return file.kind(path) == "file"
end

local function is_dir(path)
    return file.kind(path) == "dir"
end

-- One composition's state: the decoded files, the configs used, the roots configs are
-- looked up in, the group overrides (key "group@package" -> { option, site }).
local State = {}
State.__index = State

-- The decoded file at `path` (named at `site` as `field`): its document, lines and
-- `# @package` directive. Decoded once; every use takes a copy.
function State:read(path, site, field)
    self.used = self.used + 1
    if self.used > MAX_CONFIGS then
        schema.raise(site, field, string.format("the defaults lists name more than %d configs "
            .. "(a parent named several times at each level?); refit stops there",
            MAX_CONFIGS))
    end
    local f = self.files[path]
    if not f then
        if not yaml_ok then
            schema.raise(site, field, "reading " .. path
                .. " needs the YAML decoder of the refit command (module refit.yaml)")
        end
        local text = sandbox.read(path, site, field)
        local doc, lines = yaml.decode(text, path)
        if doc == NULL then
            doc = {}
        end
        if not is_mapping(doc) then
            error(string.format("%s:1: expected a mapping of keys at the top, got %s", path,
                describe(doc)), 0)
        end
        -- Hydra reads the directive from the file's leading comment lines.
        local package
        for line in text:gmatch("[^\n]*") do
            if not line:match("^%s*#") and not line:match("^%s*$") then
                break
            end
            package = package or line:match("^%s*#%s*@package%s+([%w_%.]+)")
        end
        f = { doc = doc, lines = lines, package = package }
        self.files[path] = f
    end
    return copy(f.doc), f.lines, f.package
end

-- Puts `value` at the dotted `package` of `dst` (merged into what is there), and its lines,
-- prefixed, into the where table.
-- The mapping that holds the dotted `key` of `doc` (made where missing, replacing what is
-- not a mapping), and the key's last part.
local function parent_of(doc, key)
    local node, parts = doc, {}
    for part in key:gmatch("[^.]+") do
        parts[#parts + 1] = part
    end
    for i = 1, #parts - 1 do
        if not is_mapping(node[parts[i]]) then
            node[parts[i]] = {}
        end
        node = node[parts[i]]
    end
    return node, parts[#parts]
end

function State:place(dst, package, value, lines, file)
    local node = dst
    if package ~= "" then
        local last
        node, last = parent_of(dst, package)
        if is_mapping(value) and is_mapping(node[last]) then
            merge(node[last], value)
        else
            node[last] = value
        end
    else
        merge(node, value)
    end
    local prefix = package == "" and "" or package .. "."
    for p, line in pairs(lines) do
        self.where[prefix .. p] = { file = file, line = line }
    end
end

-- The file of config `name` in group `group` (both root-relative), from the first root
-- holding it; nil when none does.
function State:find(group, name)
    local rel = (group == "" and "" or group .. "/") .. name
    for _, root in ipairs(self.roots) do
        for _, ext in ipairs({ ".yaml", ".yml" }) do
            local path = join(root, rel .. ext)
            if is_file(path) then
                return path
            end
        end
    end
    return nil
end

local function package_join(parent, package)
    if parent == "" then
        return package
    elseif package == "" then
        return parent
    end
    return parent .. "." .. package
end

-- An entry's group path, root-relative: `rel` is relative to the naming config's `group`,
-- or absolute with a leading /.
local function group_path(group, rel, site, field)
    local p = rel:sub(1, 1) == "/" and rel:sub(2) or ((group == "" and "" or group .. "/") .. rel)
    local n = normalise(p)
    if not n then
        schema.raise(site, field, string.format("'%s' climbs above the config folder", rel))
    end
    return n
end

-- The final package of an entry of a config at package `parent`: `pkg` as the entry writes
-- it (after @, relative to `parent`; _global_ is the top), else the entry's group as it
-- wrote it (`rel`, relative to the naming config's group: `- actor` inside actor/ stays at
-- the naming config's package, `- db: mysql` goes one level down), or its root-relative
-- group `abs` where it is absolute or climbs (../engine).
local function final_package(parent, pkg, rel, abs)
    if pkg then
        if pkg == "_global_" then
            return ""
        end
        local rest = pkg:match("^_global_%.(.+)$")
        if rest then
            return rest
        end
        return package_join(parent, pkg)
    end
    if rel:sub(1, 1) == "/" then
        return (abs:gsub("/", "."))
    end
    if rel:find("..", 1, true) then
        return (abs:gsub("/", "."))
    end
    return package_join(parent, (rel:gsub("/", ".")))
end

-- The parts of `group@package` (either may be a path): group, package or nil.
local function split_at(spec)
    local g, pkg = spec:match("^([^@]*)@(.*)$")
    if g then
        return g, pkg
    end
    return spec, nil
end

-- One config `name` of group `group` placed at `package` (final), named at `site`.
function State:use_config(out, group, name, package, explicit, site, field, optional, depth)
    local path = self:find(group, name)
    if not path then
        if optional then
            return
        end
        local where = {}
        for _, root in ipairs(self.roots) do
            where[#where + 1] = root
        end
        schema.raise(site, field, string.format("no config %s%s.yaml in %s", group == "" and ""
            or group .. "/", name, table.concat(where, ", ")))
    end
    self:compose(out, path, group, package, explicit, site, field, depth + 1)
end

-- Expands one entry of the defaults list of the config `path` (group `group`, package
-- `package`) into `out`. Returns true for `_self_`.
function State:entry(out, entry, path, group, package, lines, i, depth, single)
    local site = { file = path, line = lines["defaults." .. i] or lines.defaults or 1,
        scan = false }
    local field = single and "defaults" or "defaults." .. i
    if entry == "_self_" then
        return true
    end
    if type(entry) == "string" then
        if entry:match("%.ya?ml$") then
            -- NeMo RL: a parent file, relative to this one's folder, at this package.
            self:compose(out, join(dirname(path), entry), group, package, false, site, field,
                depth + 1)
            return false
        end
        -- Hydra: a config, (group/)name(@package).
        local spec, pkg = split_at(entry)
        local rel, name = spec:match("^(.*)/([^/]+)$")
        rel, name = rel or "", name or spec
        local g = rel == "" and spec:sub(1, 1) ~= "/" and group or group_path(group,
            rel == "" and "/" or rel, site, field)
        self:use_config(out, g, name, final_package(package, pkg, rel, g), pkg ~= nil, site,
            field, false, depth)
        return false
    end
    if not is_mapping(entry) or next(entry, next(entry)) ~= nil then
        schema.raise(site, field, "expected _self_, a config name or one 'group: option', got "
            .. describe(entry))
    end
    local key, option = next(entry)
    local mode, rest = key:match("^(%a+)%s+(.+)$")
    if mode ~= "override" and mode ~= "optional" then
        mode, rest = nil, key
    end
    local spec, pkg = split_at(rest)
    local g = group_path(group, spec, site, field)
    local final = final_package(package, pkg, spec, g)
    local id = g .. "@" .. final
    if mode == "override" then
        -- Recorded for the entries expanded after it (Hydra applies the primary config's
        -- overrides to the whole tree; the primary's list is expanded after its overrides
        -- are read, see State:compose).
        return false
    end
    local chosen = self.overrides[id] or self.overrides[g]
    if chosen then
        chosen.used = true
        option = chosen.option
    end
    if option == NULL or option == nil then
        return false -- a place-holder for an override that never came
    end
    local options = type(option) == "table" and option or { option }
    for _, o in ipairs(options) do
        if type(o) ~= "string" then
            schema.raise(site, field, "expected a config name, got " .. describe(o))
        end
        self:use_config(out, g, o, final, pkg ~= nil, site, field, mode == "optional", depth)
    end
    return false
end

-- Records the `override group: option` entries of a defaults list; an earlier record (the
-- command line's, a child's) wins.
function State:collect_overrides(list, path, group, package, lines)
    for i, entry in ipairs(list) do
        if is_mapping(entry) then
            local key, option = next(entry)
            local rest = type(key) == "string" and key:match("^override%s+(.+)$")
            if rest then
                local site = { file = path, line = lines["defaults." .. i] or 1, scan = false }
                local spec, pkg = split_at(rest)
                local g = group_path(group, spec, site, "defaults." .. i)
                local final = final_package(package, pkg, spec, g)
                local id = g .. "@" .. final
                if not self.overrides[id] then
                    self.overrides[id] = { option = option, site = site }
                end
            end
        end
    end
end

-- Composes the config at `path` (group `group`, final package `package`) into `out`.
function State:compose(out, path, group, package, explicit, site, field, depth)
    if depth > MAX_DEPTH then
        schema.raise(site, field, string.format("defaults nest deeper than %d configs (%s -> "
            .. "...)", MAX_DEPTH, self.primary))
    end
    for _, seen in ipairs(self.chain) do
        if seen == path then
            schema.raise(site, field, string.format("'%s' inherits from itself (%s -> %s)",
                path, table.concat(self.chain, " -> "), path))
        end
    end
    local doc, lines, directive = self:read(path, site, field)
    -- A package given in the naming entry wins over the file's directive (absolute).
    if directive and not explicit then
        package = directive == "_global_" and "" or directive:gsub("_group_", group:gsub("/", "."))
    end
    local list = doc.defaults
    local single = type(list) == "string"
    doc.defaults = nil
    if list == nil or list == NULL then
        list = {}
    elseif single then
        list = { list }
    elseif is_mapping(list) then
        schema.raise({ file = path, line = lines.defaults or 1, scan = false }, "defaults",
            "expected a file name or a list of entries, got " .. describe(list))
    end
    self:collect_overrides(list, path, group, package, lines)
    local self_done = false
    self.chain[#self.chain + 1] = path
    for i, entry in ipairs(list) do
        if self:entry(out, entry, path, group, package, lines, i, depth, single) then
            self:place(out, package, doc, lines, path)
            self_done = true
        end
    end
    self.chain[#self.chain] = nil
    if not self_done then
        self:place(out, package, doc, lines, path)
    end
end

-- The folder `dir` (relative) found from the working directory, as Hydra takes file://
-- paths, else from each folder above `start` (verl's recipes are run from its repository's
-- root, where their file://verl/trainer/config points); nil when none holds it.
local function find_dir(dir, start)
    if is_dir(dir) then
        return dir
    end
    local up = start
    for _ = 1, MAX_DEPTH do
        if up == "." or up == "/" or up == "" then
            return nil
        end
        if is_dir(join(up, dir)) then
            return join(up, dir)
        end
        up = dirname(up)
    end
    return nil
end

-- The roots configs are looked up in: the primary's folder, then its hydra.searchpath.
local function roots_of(primary, doc, lines)
    local roots = { dirname(primary) }
    local sp = is_mapping(doc.hydra) and doc.hydra.searchpath
    if type(sp) ~= "table" then
        return roots
    end
    for i, entry in ipairs(sp) do
        local site = { file = primary, line = lines["hydra.searchpath." .. i] or 1, scan = false }
        local dir = type(entry) == "string" and entry:match("^file://(.+)$")
        local pkg = type(entry) == "string" and entry:match("^pkg://(.+)$")
        if pkg then
            dir = pkg:gsub("%.", "/")
        end
        if not dir then
            schema.raise(site, "hydra.searchpath." .. i, "expected file://folder or "
                .. "pkg://module, got " .. describe(entry))
        end
        local found = dir:sub(1, 1) == "/" and dir or find_dir(dir, dirname(primary))
        if not found then
            schema.raise(site, "hydra.searchpath." .. i, string.format("no folder %s, from the "
                .. "working directory or any folder above %s (run refit where the framework "
                .. "runs, or give the path from /)", dir, dirname(primary)))
        end
        roots[#roots + 1] = found
    end
    return roots
end

-- A command-line override (Hydra's grammar, the part configs use): key=value, +key=value,
-- ++key=value, ~key, or group=option for a config group. Returns kind, key, value text.
local function parse_override(text, site, field)
    local del = text:match("^~([%w_%.%-@/]+)$")
    if del then
        return "delete", del
    end
    local plus, key, value = text:match("^(%+*)([%w_%.%-@/]+)=(.*)$")
    if not key or #plus > 2 then
        schema.raise(site, field, string.format("expected key=value, +key=value or ~key (as on "
            .. "the framework's command line), got %s", describe(text)))
    end
    return plus == "" and "set" or "add", key, value
end

local function decode_value(text, site, field)
    local ok, v = pcall(yaml.decode, "v: " .. text, "override")
    if not ok or not is_mapping(v) then
        schema.raise(site, field, "cannot read the value of " .. describe(text))
    end
    return v.v == nil and NULL or v.v
end

local function set_path(doc, key, value)
    local node, last = parent_of(doc, key)
    node[last] = value
end

-- Composes the config at `path` (named at `site` as `field`) with the command-line
-- `overrides` (a list of strings, named at `osite` as `ofield`). Returns the document and
-- where[dotted] = { file =, line = }, the place that decided each key.
function compose.load(path, site, field, overrides, osite, ofield)
    local st = setmetatable({ files = {}, used = 0, where = {}, overrides = {},
        primary = path, chain = {} }, State)
    local doc, lines = st:read(path, site, field)
    st.used = 0
    st.roots = roots_of(path, doc, lines)
    local sets = {}
    for i, text in ipairs(overrides or {}) do
        local f = ofield .. "." .. i
        local kind, key, value = parse_override(text, osite, f)
        if kind ~= "delete" and not key:find(".", 1, true) or key:find("@", 1, true) then
            -- group=option: a config group's choice, used when the defaults list reaches it.
            st.overrides[key] = { option = decode_value(value, osite, f), site = osite, cli = f,
                text = text }
        else
            sets[#sets + 1] = { kind = kind, key = key, value = value, field = f }
        end
    end
    local out = {}
    st:compose(out, path, "", "", false, site, field, 0)
    out.hydra = nil
    for _, s in ipairs(sets) do
        local w = { file = osite.file, line = osite.line or 1, override = s.field }
        if s.kind == "delete" then
            set_path(out, s.key, nil)
        else
            set_path(out, s.key, decode_value(s.value, osite, s.field))
            st.where[s.key] = w
        end
    end
    -- A key=value naming no group and no key of the document is a plain key (Hydra would
    -- want +key for a new one; refit takes it).
    for key, o in pairs(st.overrides) do
        if o.cli and not o.used then
            set_path(out, key, o.option)
            st.where[key] = { file = osite.file, line = osite.line or 1, override = o.cli }
        end
    end
    return out, st.where
end

return compose
