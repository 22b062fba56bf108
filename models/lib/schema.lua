-- schema.lua: validate plain Lua tables against declarative schemas.
-- The one mechanism every constructor uses; errors read "<file>:<line>: <dotted.field>: <message>".

-- A schema is a table: { type = "integer"|"number"|"string"|"boolean"|"function"|"table"|
-- "record"|"list" (or a list of plain type names), required, default, min, max (integers and
-- numbers, inclusive), above (numbers: exclusive lower bound), values (allowed strings),
-- hint (why, appended to the "expected" message), fields (records: name -> schema), open
-- (records: ignore unknown keys), variant + variants (records: a tag field such as `kind`
-- selects extra fields), items + min_items + max_items (lists: the schema of every entry,
-- entries 1..n without holes) }. A record whose default is a table is checked as that table
-- when absent, so the defaults of its fields are filled in.
--
-- A site says where the checked table was written: { file, line, scan, names }. `line` is
-- the line of the constructor call (nil: the table returned by the file); `scan = false`
-- (JSON files) reports `line` as is instead of rescanning the source for the field; `names`
-- (optional) maps a field to the name the user wrote it under (config.json keys).

local locate = require("locate")

local schema = {}

-- The bounds of every size, so that no sum or product of validated sizes wraps in Lua's or
-- C's 64-bit integers and no figure is absurd. A model size (hidden, heads, vocab, layers,
-- experts, ...) fits a C int; a tensor has at most 2^48 elements and a model at most 2^53
-- parameters (exact in a double, the figures C reports); a GPU count, a GPU index and a
-- parallel size are at most 2^20 (1,048,576 GPUs), so a product of three stays below 2^63.
-- Rates are at most 1e6 GB/s, latencies and overheads at most 1e7 us (10 s), memory at most
-- 1e6 GB per GPU.
schema.MAX_MODEL_SIZE = 2147483647
schema.MAX_NUMEL = 1 << 48
schema.MAX_PARAMS = 1 << 53
schema.MAX_TENSORS = 1 << 20
schema.MAX_GPUS = 1 << 20
schema.MAX_GBPS = 1e6
schema.MAX_US = 1e7
schema.MAX_GB = 1e6

-- The schemas of a model's sizes (hidden, heads, widths: 1 to MAX_MODEL_SIZE) and counts
-- (0 allowed), for the constructors and config readers that validate them.
function schema.model_size(required, default)
    return { type = "integer", min = 1, max = schema.MAX_MODEL_SIZE, required = required,
             default = default }
end

function schema.model_count(required, default)
    return { type = "integer", min = 0, max = schema.MAX_MODEL_SIZE, required = required,
             default = default }
end

-- "file:line: field": where `field` of the table at `site` was written, as errors name it.
function schema.where(site, field)
    field = site.names and site.names[field] or field
    local line = site.line or 0
    if site.scan ~= false then
        line = locate.line(site.file, site.line, field)
    end
    return string.format("%s:%d: %s", site.file, line, field)
end

-- Raises the one-string error of the contract. error(msg, 0): the message already names
-- the user's file and line, which Lua's own position would only obscure.
function schema.raise(site, field, message)
    error(schema.where(site, field) .. ": " .. message, 0)
end

-- Levenshtein distance, to suggest the key a typo was meant to be.
local function distance(a, b)
    local prev = {}
    for j = 0, #b do
        prev[j] = j
    end
    for i = 1, #a do
        local cur = { [0] = i }
        for j = 1, #b do
            local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
            cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        end
        prev = cur
    end
    return prev[#b]
end

local function common_prefix(a, b)
    local n = 0
    while n < #a and a:sub(n + 1, n + 1) == b:sub(n + 1, n + 1) do
        n = n + 1
    end
    return n
end

-- " (did you mean 'heads'?)" when one of `names` is within two edits of `word`, else "".
-- Ties go to the longer common prefix: 'tpp' suggests 'tp', not 'pp'.
function schema.suggest(word, names)
    local best, best_distance, best_prefix = nil, 3, -1
    for _, name in ipairs(names) do
        local d, p = distance(word, name), common_prefix(word, name)
        local better = d < best_distance or best ~= nil and d == best_distance
            and (p > best_prefix or p == best_prefix and name < best)
        if better then
            best, best_distance, best_prefix = name, d, p
        end
    end
    return best and string.format(" (did you mean '%s'?)", best) or ""
end

-- How a value is shown after "got": strings quoted, tables and functions by kind.
function schema.describe(value)
    local kind = type(value)
    if kind == "string" then
        return string.format("'%s'", value)
    elseif value ~= value then
        -- tostring(0/0) is "-nan" or "nan" depending on the C library.
        return "nan"
    elseif math.type(value) == "float" then
        -- 2^32 shows as 4294967296, not 4294967296.0: the value, whatever its Lua subtype.
        local n = math.tointeger(value)
        return n and tostring(n) or string.format("%.14g", value)
    elseif kind == "number" or kind == "boolean" or kind == "nil" then
        return tostring(value)
    end
    return "a " .. kind
end

local function quoted_list(values)
    local out = {}
    for i, v in ipairs(values) do
        out[i] = string.format("'%s'", v)
    end
    return table.concat(out, ", ")
end

local ARTICLE = { integer = "an integer", number = "a number", string = "a string",
                  boolean = "a boolean", ["function"] = "a function", table = "a table",
                  record = "a table", list = "a list" }

-- "a number > 0", "a number from 0 to 1", "a number > 0 and <= 1", "a number >= 1".
local function number_range(spec)
    local function show(n)
        return string.format("%.14g", n)
    end
    if spec.min and spec.max then
        return string.format("a number from %s to %s", show(spec.min), show(spec.max))
    end
    local parts = {}
    if spec.above then
        parts[#parts + 1] = "> " .. show(spec.above)
    elseif spec.min then
        parts[#parts + 1] = ">= " .. show(spec.min)
    end
    if spec.max then
        parts[#parts + 1] = "<= " .. show(spec.max)
    end
    return "a number " .. table.concat(parts, " and ")
end

-- The "expected ..." phrase of a schema.
local function expected(spec)
    if spec.type == "list" then
        local what = spec.items and spec.items.type == "integer" and "a list of integers"
            or "a list"
        if spec.min_items and spec.max_items then
            return string.format("%s of %d to %d entries", what, spec.min_items, spec.max_items)
        elseif spec.min_items then
            return string.format("%s of at least %d entries", what, spec.min_items)
        end
        return what
    elseif spec.values then
        return "one of " .. quoted_list(spec.values)
    elseif spec.type == "integer" and spec.min and spec.max then
        return string.format("an integer from %d to %d", spec.min, spec.max)
    elseif spec.type == "integer" and spec.min == 1 then
        return "a positive integer"
    elseif spec.type == "integer" and spec.min == 0 then
        return "a non-negative integer"
    elseif spec.type == "integer" and spec.min then
        return string.format("an integer >= %d", spec.min)
    elseif spec.type == "number" and (spec.min or spec.max or spec.above) then
        return number_range(spec)
    elseif type(spec.type) == "table" then
        local names = {}
        for i, t in ipairs(spec.type) do
            names[i] = ARTICLE[t]
        end
        return table.concat(names, " or ")
    end
    return ARTICLE[spec.type]
end

local function join(prefix, key)
    if prefix == nil or prefix == "" then
        return tostring(key)
    end
    return prefix .. "." .. tostring(key)
end

local function contains(list, value)
    for _, v in ipairs(list) do
        if v == value then
            return true
        end
    end
    return false
end

local function sorted_keys(t)
    local keys = {}
    for k in pairs(t) do
        keys[#keys + 1] = k
    end
    table.sort(keys, function(a, b)
        return tostring(a) < tostring(b)
    end)
    return keys
end

local check

-- The field names of a record schema in alphabetical order, computed once per schema.
local orders = setmetatable({}, { __mode = "k" })
local function field_order(fields)
    local order = orders[fields]
    if not order then
        order = sorted_keys(fields)
        orders[fields] = order
    end
    return order
end

-- Records: every field checked (alphabetical order, so the first error reported does not
-- depend on hash order), unknown and positional entries rejected unless the record is open.
local function check_record(value, spec, field)
    local fields = spec.fields or {}
    if spec.variant then
        local tag = value[spec.variant]
        local kinds = sorted_keys(spec.variants)
        local tag_field = join(field, spec.variant)
        if tag == nil then
            return nil, tag_field, "missing (one of " .. quoted_list(kinds) .. ")"
        elseif not spec.variants[tag] then
            return nil, tag_field, string.format("expected one of %s, got %s",
                quoted_list(kinds), schema.describe(tag))
        end
        local merged = { [spec.variant] = { type = "string" } }
        for name, sub in pairs(fields) do
            merged[name] = sub
        end
        for name, sub in pairs(spec.variants[tag]) do
            merged[name] = sub
        end
        fields = merged
    end
    if not spec.open then
        -- Sorted only when some key is wrong: a model's thousands of tensors are all right.
        local wrong = false
        for key in pairs(value) do
            if type(key) ~= "string" or not fields[key] then
                wrong = true
                break
            end
        end
        for _, key in ipairs(wrong and sorted_keys(value) or {}) do
            if type(key) ~= "string" then
                return nil, join(field, key), "unexpected positional entry "
                    .. schema.describe(value[key]) .. " (fields are written name = value)"
            elseif not fields[key] then
                return nil, join(field, key), string.format("unknown key '%s'%s", key,
                    schema.suggest(key, sorted_keys(fields)))
            end
        end
    end
    local out = {}
    for _, name in ipairs(field_order(fields)) do
        local v, bad_field, message = check(value[name], fields[name], join(field, name))
        if bad_field then
            return nil, bad_field, message
        end
        out[name] = v
    end
    return out
end

-- Lists: entries 1..n (no holes, no named keys), each checked against spec.items.
local function check_list(value, spec, field)
    local n, count, named = #value, 0, false
    for key in pairs(value) do
        count = count + 1
        if math.type(key) ~= "integer" or key < 1 or key > n then
            named = true
        end
    end
    if named or (spec.min_items and n < spec.min_items)
        or (spec.max_items and n > spec.max_items) then
        return nil, field, string.format("expected %s, got a table of %d entr%s",
            expected(spec), count, count == 1 and "y" or "ies")
    end
    local out = {}
    for i = 1, n do
        local v, bad_field, message = check(value[i], spec.items or {}, join(field, i))
        if bad_field then
            return nil, bad_field, message
        end
        out[i] = v
    end
    return out
end

-- Returns the normalised value (defaults filled in, integral floats made integers), or
-- nil, field, message.
check = function(value, spec, field)
    if value == nil then
        if spec.required then
            return nil, field, "missing"
        elseif spec.type ~= "record" or type(spec.default) ~= "table" then
            return spec.default
        end
        -- An absent record with a table default: check the default, filling its fields.
        value = spec.default
    end
    local kind = spec.type
    local result, ok = value, false
    if kind == "integer" then
        -- JSON decoders may hand integers over as floats: 7168.0 is accepted as 7168.
        local n = type(value) == "number" and math.tointeger(value) or nil
        ok = n ~= nil and not (spec.min and n < spec.min) and not (spec.max and n > spec.max)
        result = n
    elseif kind == "number" then
        -- Finite numbers only: NaN and infinities are never a size, a rate or a latency.
        ok = type(value) == "number" and value == value and math.abs(value) ~= math.huge
            and not (spec.min and value < spec.min) and not (spec.max and value > spec.max)
            and not (spec.above and value <= spec.above)
    elseif kind == "record" then
        if type(value) == "table" then
            return check_record(value, spec, field)
        end
    elseif kind == "list" then
        if type(value) == "table" then
            return check_list(value, spec, field)
        end
    elseif kind == nil then
        -- No type: any value (the entries of a list without `items`).
        ok = true
    elseif type(kind) == "table" then
        ok = contains(kind, type(value))
    else
        ok = type(value) == kind and (spec.values == nil or contains(spec.values, value))
    end
    if not ok then
        return nil, field, string.format("expected %s, got %s%s", expected(spec),
            schema.describe(value), spec.hint and " (" .. spec.hint .. ")" or "")
    end
    return result
end

-- Checks `value` against `spec` without raising: the normalised copy, or nil, the dotted
-- field and the message (for callers that decide where a fault is reported).
function schema.check(value, spec, prefix)
    return check(value, spec, prefix)
end

-- Validates `value` against `spec`; returns the normalised copy or raises at `site`.
-- `prefix` is the dotted path of `value` itself ("" at the top of a file).
function schema.validate(value, spec, site, prefix)
    local out, field, message = check(value, spec, prefix)
    if field then
        schema.raise(site, field, message)
    end
    return out
end

return schema
