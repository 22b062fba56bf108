-- json.lua: a small JSON decoder standing in for the refit command's refit.json (sim/json.c,
-- jansson) in Lua tests run by plain lua5.4, so they can read t/data/hf/*/config.json.

-- Same contract as refit.json for what the tests read: decode(text [, name]) returns Lua
-- tables (objects keyed by string, arrays 1..n), integers as Lua integers, other numbers as
-- floats, JSON null as json.null; malformed text raises "name:line: message".

local json = { null = setmetatable({}, { __tostring = function() return "null" end }) }

local ESCAPES = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n",
                  r = "\r", t = "\t" }

function json.decode(text, name)
    local pos = 1
    local function fail(message)
        local line = select(2, text:sub(1, pos):gsub("\n", "")) + 1
        error(string.format("%s:%d: %s", name or "json", line, message), 0)
    end
    local function skip()
        pos = text:find("[^ \t\r\n]", pos) or #text + 1
    end
    local value
    local function str()
        local out, i = {}, pos + 1
        while true do
            local c = text:sub(i, i)
            if c == "" then
                fail("unterminated string")
            elseif c == '"' then
                pos = i + 1
                return table.concat(out)
            elseif c == "\\" then
                local e = text:sub(i + 1, i + 1)
                if e == "u" then
                    local hex = text:sub(i + 2, i + 5)
                    if not hex:match("^%x%x%x%x$") then
                        fail("bad \\u escape")
                    end
                    out[#out + 1] = utf8.char(tonumber(hex, 16))
                    i = i + 6
                elseif ESCAPES[e] then
                    out[#out + 1] = ESCAPES[e]
                    i = i + 2
                else
                    fail("bad escape")
                end
            else
                out[#out + 1] = c
                i = i + 1
            end
        end
    end
    value = function()
        skip()
        local c = text:sub(pos, pos)
        if c == "{" then
            local obj = {}
            pos = pos + 1
            skip()
            if text:sub(pos, pos) == "}" then
                pos = pos + 1
                return obj
            end
            while true do
                skip()
                if text:sub(pos, pos) ~= '"' then
                    fail("expected a key")
                end
                local key = str()
                skip()
                if text:sub(pos, pos) ~= ":" then
                    fail("expected ':'")
                end
                pos = pos + 1
                obj[key] = value()
                skip()
                local d = text:sub(pos, pos)
                pos = pos + 1
                if d == "}" then
                    return obj
                elseif d ~= "," then
                    fail("expected ',' or '}'")
                end
            end
        elseif c == "[" then
            local arr = {}
            pos = pos + 1
            skip()
            if text:sub(pos, pos) == "]" then
                pos = pos + 1
                return arr
            end
            while true do
                arr[#arr + 1] = value()
                skip()
                local d = text:sub(pos, pos)
                pos = pos + 1
                if d == "]" then
                    return arr
                elseif d ~= "," then
                    fail("expected ',' or ']'")
                end
            end
        elseif c == '"' then
            return str()
        end
        for word, v in pairs({ ["true"] = true, ["false"] = false, null = json.null }) do
            if text:sub(pos, pos + #word - 1) == word then
                pos = pos + #word
                return v
            end
        end
        local num = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
        if not num or num == "" or num == "-" then
            fail("unexpected " .. (c == "" and "end of text" or "'" .. c .. "'"))
        end
        pos = pos + #num
        -- jansson keeps integers apart from reals, as Lua does.
        return num:match("^-?%d+$") and math.tointeger(tonumber(num)) or tonumber(num)
    end
    local result = value()
    skip()
    if pos <= #text then
        fail("trailing text")
    end
    return result
end

return json
