-- locate.lua: find the source line where a field of a table constructor is written.
-- Lua tables carry no line information, so errors in declarative files rescan the source text.

-- A minimal tokenizer (strings, long brackets and comments skipped) tracks brace nesting and
-- `key =` pairs. Every `{ ... }` in the file becomes a node { line, index, keys, count }
-- whose `keys` map each written key (names, ["string"] keys, positions 1..n) to
-- { line = where the key is written, node = the table literal that is its value, if any }.
-- It is only run when an error is raised, so it favours clarity over speed.

local file = require("file")

local locate = {}

local KEYWORDS = {}
for word in ([[and break do else elseif end false for function goto if in local nil not or
               repeat return then true until while]]):gmatch("%a+") do
    KEYWORDS[word] = true
end

-- Operators longer than one character, longest first, so `==` is never read as `=`.
local LONG_OPS = { "...", "..", "==", "~=", "<=", ">=", "//", "::", "<<", ">>" }

-- Returns the level (number of `=`) of a long bracket `[==[` opening at i, or nil.
local function long_bracket(text, i)
    local eqs = text:match("^%[(=*)%[", i)
    return eqs and #eqs
end

-- Splits Lua source into tokens { kind = "name"|"keyword"|"string"|"number"|"op", value,
-- line }. Only what the structure scan needs is exact: names, keywords, brackets and `=`.
local function tokenize(text)
    local tokens, line, i, n = {}, 1, 1, #text

    local function push(kind, value, at_line)
        tokens[#tokens + 1] = { kind = kind, value = value, line = at_line or line }
    end

    -- Skips a long-bracket body starting at i; returns the index after the closing bracket.
    local function skip_long(i0, level)
        local _, stop = text:find("]" .. ("="):rep(level) .. "]", i0, true)
        stop = stop or n
        line = line + select(2, text:sub(i0, stop):gsub("\n", ""))
        return stop + 1
    end

    while i <= n do
        local c = text:sub(i, i)
        if c == "\n" then
            line = line + 1
            i = i + 1
        elseif c:match("%s") then
            i = i + 1
        elseif text:sub(i, i + 1) == "--" then
            local level = long_bracket(text, i + 2)
            if level then
                i = skip_long(i + level + 4, level)
            else
                i = (text:find("\n", i, true) or n + 1)
            end
        elseif c == "[" and long_bracket(text, i) then
            local level, first = long_bracket(text, i), line
            i = skip_long(i + level + 2, level)
            push("string", nil, first)
        elseif c == '"' or c == "'" then
            -- Short string: a backslash escapes the next character (also an escaped newline).
            local first, j = line, i + 1
            while j <= n and text:sub(j, j) ~= c do
                if text:sub(j, j) == "\\" then
                    j = j + 1
                end
                if text:sub(j, j) == "\n" then
                    line = line + 1
                end
                j = j + 1
            end
            push("string", text:sub(i + 1, j - 1), first)
            i = j + 1
        elseif c:match("[%a_]") then
            local word = text:match("^[%w_]+", i)
            push(KEYWORDS[word] and "keyword" or "name", word)
            i = i + #word
        elseif c:match("%d") or (c == "." and text:sub(i + 1, i + 1):match("%d")) then
            -- Numbers, with a signed exponent (1e-6, 0x1p-4) kept inside the token.
            local j = i
            repeat
                local _, stop = text:find("^[%w%.]+", j)
                j = stop + 1
                local signed = text:sub(j - 1, j - 1):match("[eEpP]")
                    and text:sub(j, j):match("[+-]")
                if signed then
                    j = j + 1
                end
            until not signed
            push("number", text:sub(i, j - 1))
            i = j
        else
            local op = c
            for _, long in ipairs(LONG_OPS) do
                if text:sub(i, i + #long - 1) == long then
                    op = long
                    break
                end
            end
            push("op", op)
            i = i + #op
        end
    end
    return tokens
end

local function is_op(token, value)
    return token ~= nil and token.kind == "op" and token.value == value
end

-- Keywords that open a block closed by `end` (`repeat` is closed by `until`). `while` and
-- `for` are covered by their `do`, `elseif` and `else` continue the block of `if`.
local OPENS_BLOCK = { ["function"] = true, ["if"] = true, ["do"] = true, ["repeat"] = true }
local CLOSES_BLOCK = { ["end"] = true, ["until"] = true }

-- Parses source text into { tables = nodes in source order, tokens, return_index }.
-- return_index is the token index of the chunk's own (top-level) `return`.
function locate.parse(text)
    local tokens = tokenize(text)
    local tables, stack, return_index = {}, {}, nil
    local i = 1
    while i <= #tokens do
        local tok = tokens[i]
        local top = stack[#stack]
        if top and top.kind == "{" and top.expect_item and not is_op(tok, "}") then
            -- First token of a table item: decide which key the item is written under.
            local key, value_at
            if tok.kind == "name" and is_op(tokens[i + 1], "=") then
                key, value_at = tok.value, i + 2
            elseif is_op(tok, "[") and tokens[i + 1] and tokens[i + 1].kind == "string"
                and tokens[i + 1].value and is_op(tokens[i + 2], "]")
                and is_op(tokens[i + 3], "=") then
                key, value_at = tokens[i + 1].value, i + 4
            else
                top.node.count = top.node.count + 1
                key, value_at = top.node.count, i
            end
            top.entry = { line = tok.line }
            top.node.keys[key] = top.entry
            top.value_at = value_at
            top.expect_item = false
            i = value_at
        else
            if is_op(tok, "{") then
                local node = { line = tok.line, index = i, keys = {}, count = 0 }
                tables[#tables + 1] = node
                if top and top.kind == "{" and top.value_at == i then
                    top.entry.node = node
                end
                stack[#stack + 1] = { kind = "{", node = node, expect_item = true }
            elseif is_op(tok, "(") or is_op(tok, "[") then
                stack[#stack + 1] = { kind = tok.value }
            elseif is_op(tok, "}") or is_op(tok, ")") or is_op(tok, "]") then
                stack[#stack] = nil
            elseif tok.kind == "keyword" and OPENS_BLOCK[tok.value] then
                stack[#stack + 1] = { kind = "block" }
            elseif tok.kind == "keyword" and CLOSES_BLOCK[tok.value] then
                stack[#stack] = nil
            elseif (is_op(tok, ",") or is_op(tok, ";")) and top and top.kind == "{" then
                top.expect_item = true
            elseif tok.kind == "keyword" and tok.value == "return" and #stack == 0 then
                return_index = i
            end
            i = i + 1
        end
    end
    return { tables = tables, tokens = tokens, return_index = return_index }
end

-- True when the brace at token index i is the argument of a call: `f{`, `a.f{` or `f({`.
local function is_call_argument(tokens, i)
    local prev = tokens[i - 1]
    if prev and prev.kind == "name" then
        return true
    end
    return is_op(prev, "(") and tokens[i - 2] ~= nil and tokens[i - 2].kind == "name"
end

-- The table a file's fields are written in: with call_line, the first constructor-call
-- argument at or after that line; without, the first table of the top-level `return`.
function locate.root(parsed, call_line)
    for _, node in ipairs(parsed.tables) do
        if call_line then
            if node.line >= call_line and is_call_argument(parsed.tokens, node.index) then
                return node
            end
        elseif parsed.return_index and node.index > parsed.return_index then
            return node
        end
    end
    return nil
end

-- Splits "train.tp" into { "train", "tp" }; numeric parts address positional items.
local function split(path)
    local keys = {}
    for part in path:gmatch("[^.]+") do
        keys[#keys + 1] = math.tointeger(tonumber(part)) or part
    end
    return keys
end

-- Line of the dotted `path` inside `root`. A key that is not written (a missing field)
-- yields the line of the deepest key that is: the enclosing table's key.
function locate.find(root, path)
    local line, node = nil, root
    for _, key in ipairs(split(path)) do
        local entry = node and node.keys[key]
        if not entry then
            break
        end
        line, node = entry.line, entry.node
    end
    return line
end

-- Line of the dotted `field` in the file at `path` (read by file.lua, the one reader):
-- inside the constructor called at call_line, or inside the returned table when call_line
-- is nil. Falls back to the call line, the table's line, the `return` line, then 0 (file
-- unreadable).
function locate.line(path, call_line, field)
    local text = file.read(path)
    if not text then
        return call_line or 0
    end
    local parsed = locate.parse(text)
    local root = locate.root(parsed, call_line)
    if not root then
        local ret = parsed.return_index and parsed.tokens[parsed.return_index]
        return call_line or (ret and ret.line) or 0
    end
    return locate.find(root, field) or call_line or root.line
end

return locate
