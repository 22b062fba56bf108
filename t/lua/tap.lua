-- tap.lua: a minimal TAP producer for the Lua tests (one `ok`/`not ok` line per check,
-- the plan `1..N` at the end, diagnostics as `#` lines, exit status 1 on any failure).

local tap = { count = 0, failed = 0 }

local function show(v)
    if type(v) == "string" then
        return string.format("%q", v)
    end
    return tostring(v)
end

function tap.ok(cond, description, diagnostic)
    tap.count = tap.count + 1
    if cond then
        print(string.format("ok %d - %s", tap.count, description))
    else
        tap.failed = tap.failed + 1
        print(string.format("not ok %d - %s", tap.count, description))
        if diagnostic then
            print("# " .. tostring(diagnostic):gsub("\n", "\n# "))
        end
    end
    return cond
end

function tap.is(got, want, description)
    return tap.ok(got == want, description,
        string.format("got:  %s\nwant: %s", show(got), show(want)))
end

-- Relative closeness: |got/want - 1| <= tolerance.
function tap.near(got, want, tolerance, description)
    local off = got / want - 1
    return tap.ok(math.abs(off) <= tolerance, description,
        string.format("got %.6g, want %.6g within %.2f%% (off by %.3f%%)", got, want,
            tolerance * 100, off * 100))
end

-- Runs fn and checks that it raises exactly `message` (a string error).
function tap.raises(fn, message, description)
    local ok, err = pcall(fn)
    if ok then
        return tap.ok(false, description, "no error raised; want: " .. message)
    end
    return tap.is(err, message, description)
end

-- Like tap.raises, but only the start of the message must match.
function tap.raises_prefix(fn, prefix, description)
    local ok, err = pcall(fn)
    if ok then
        return tap.ok(false, description, "no error raised; want prefix: " .. prefix)
    end
    return tap.ok(type(err) == "string" and err:sub(1, #prefix) == prefix, description,
        string.format("got:         %s\nwant prefix: %s", show(err), show(prefix)))
end

-- Prints the plan and exits non-zero when a check failed.
function tap.done()
    print("1.." .. tap.count)
    os.exit(tap.failed == 0 and 0 or 1)
end

-- Sets package.path for the library in `models_dir` (the test's first argument, else
-- $REFIT_MODELS as `make check` sets it) and
-- returns the refit module, the test data directory (t/data) and the source tree's root,
-- both found from the script's own path so tests run from any directory.
function tap.setup()
    local models_dir = arg[1] or os.getenv("REFIT_MODELS")
    if not models_dir then
        io.stderr:write("usage: lua5.4 " .. arg[0] .. " <models-dir>\n")
        os.exit(2)
    end
    local script_dir = arg[0]:match("^(.*)/[^/]*$") or "."
    package.path = models_dir .. "/lib/?.lua;" .. script_dir .. "/?.lua;" .. package.path
    local refit = require("refit")
    refit.models_dir = models_dir
    return refit, script_dir .. "/../data", script_dir .. "/../.."
end

-- Model helpers the model tests share (models.lua, hf.lua): a tensor's elements, a model's
-- total and active parameters (routed experts count experts_per_token / experts), a tensor
-- by name, a shape as text ("absent" for none).
function tap.numel(t)
    local n = 1
    for _, d in ipairs(t.shape) do
        n = n * d
    end
    return n
end

function tap.counts(model)
    local total, active = 0, 0
    for _, t in ipairs(model.tensors) do
        local n = tap.numel(t)
        total = total + n
        active = active + (t.experts > 0 and n * model.experts_per_token / t.experts or n)
    end
    return total, active
end

function tap.by_name(model, name)
    for _, t in ipairs(model.tensors) do
        if t.name == name then
            return t
        end
    end
    return nil
end

function tap.shape(t)
    return t and table.concat(t.shape, "x") or "absent"
end

return tap
