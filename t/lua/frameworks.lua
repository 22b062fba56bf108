-- frameworks.lua: TAP tests of the framework profiles (models/frameworks/*.lua), the
-- normalised profile of the Lua -> C contract, and scenarios naming one. Errors are in
-- errors.lua.
-- Usage: lua5.4 t/lua/frameworks.lua <models-dir>

package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local tap = require("tap")
local refit, data = tap.setup()
local framework = require("framework")

-- The contract: every field, its Lua type; a section the profile lacks is false.
local BROADCAST = {
    communicator = "string", root = "string", gather = "string",
    bucket = { hbm_fraction = "number", max_mib = "integer", mib = "integer" },
    buffers = "integer", per_tensor = "boolean", wait_load = "boolean", pack_copy = "boolean",
    quantize = "string", export_calls = "number", load_calls = "number", loader = "string",
    overlap_why = "string",
}
local RESHARD = {
    plan = "string", stage_groups = "integer", misc_after_bulk = "boolean", stack_experts = "boolean",
    fused_copy = "boolean", calls = "number", barriers = "integer", serial_calls = "boolean",
}
local P2P_SHAPE = {
    plan = "string", gather = "string", select = "string", from = "string", verb = "string",
    into = "string", cpu_loader = "boolean", wait_nonlast = "boolean",
    receiver_serial = "boolean", pack_copy = "boolean", experts_after = "boolean",
    bucket = { hbm_fraction = "number", max_mib = "integer", mib = "integer" },
    buffers = "integer", quantize = "string", export_calls = "number", load_calls = "number",
    loader = "string", register = "string", register_regions = "integer",
    register_every_refit = "boolean", overlap_why = "string",
}
local COLOCATED = {
    export = "string", bucket = { hbm_fraction = "number", max_mib = "integer", mib = "integer" },
    buffers = "integer", clone = "boolean", quantize = "string", export_calls = "number",
    load_calls = "number", offload_optimizer = "boolean", wake_weights = "boolean",
    offload_weights = "boolean", overlap_why = "string",
}
local SOURCE = { field = "string", repo = "string", commit = "string", file = "string",
                 func = "string", says = "string" }

-- nil when `value` has exactly the fields of `shape`, else what is wrong.
local function mismatch(value, shape, prefix)
    for key, want in pairs(shape) do
        local v, field = value[key], prefix .. key
        if type(want) == "table" then
            if type(v) ~= "table" then
                return field .. " is not a table"
            end
            local problem = mismatch(v, want, field .. ".")
            if problem then
                return problem
            end
        elseif want == "integer" and math.type(v) ~= "integer"
            or want ~= "integer" and type(v) ~= want then
            return string.format("%s is %s, want %s", field, tostring(v), want)
        end
    end
    for key in pairs(value) do
        if shape[key] == nil then
            return "unexpected field " .. prefix .. tostring(key)
        end
    end
    return nil
end

local function contract(p)
    local top = { name = "string", source = "string", finalize_s = "number" }
    for k in pairs({ strategies = 1, broadcast = 1, reshard = 1, colocated = 1, p2p = 1,
                     sources = 1 }) do
        if p[k] == nil then
            return "missing field " .. k
        end
    end
    local rest = {}
    for k, v in pairs(p) do
        if k ~= "strategies" and k ~= "broadcast" and k ~= "reshard" and k ~= "colocated"
            and k ~= "p2p" and k ~= "sources" then
            rest[k] = v
        end
    end
    local problem = mismatch(rest, top, "")
        or (p.broadcast ~= false and mismatch(p.broadcast, BROADCAST, "broadcast."))
        or (p.reshard ~= false and mismatch(p.reshard, RESHARD, "reshard."))
        or (p.colocated ~= false and mismatch(p.colocated, COLOCATED, "colocated."))
        or (p.p2p ~= false and mismatch(p.p2p, P2P_SHAPE, "p2p."))
    if problem then
        return problem
    end
    for i, s in ipairs(p.sources) do
        problem = mismatch(s, SOURCE, "sources." .. i .. ".")
        if problem then
            return problem
        end
    end
    for i, s in ipairs(p.strategies) do
        if type(s) ~= "string" then
            return "strategies." .. i .. " is not a string"
        end
    end
    return nil
end

-- The presets listed in framework.lua are exactly the files of models/frameworks/.
local listing = io.popen("ls '" .. refit.models_dir .. "/frameworks'")
local files = {}
for name in listing:lines() do
    files[#files + 1] = name:match("^(.*)%.lua$")
end
listing:close()
table.sort(files)
tap.is(table.concat(files, " "), table.concat(framework.PRESETS, " "),
    "framework.PRESETS lists every file of models/frameworks/")

local site = { file = "t", line = 0, scan = false }
local profiles = {}
for _, name in ipairs(framework.PRESETS) do
    local ok, p = pcall(framework.load, name, site, "framework", { models = refit.models_dir })
    if tap.ok(ok, name .. ": loads", p) then
        profiles[name] = p
        tap.ok(p.name == name and p.source == refit.models_dir .. "/frameworks/" .. name
            .. ".lua", name .. ": name and source")
        tap.is(contract(p), nil, name .. ": every field of the contract, nothing else")
        -- Every citation names a public repository at a commit.
        local cited = true
        for _, s in ipairs(p.sources) do
            cited = cited and s.repo:match("^[%w-]+/[%w._-]+$") and s.commit:match("^%x+$")
                and #s.file > 0 and #s.func > 0 and #s.says > 0
        end
        tap.ok(cited, name .. ": every source names repo, commit, file, function and what it says")
    end
end

-- The figures as doc/research/frameworks.md cites them (§1, §2, §11).
local function fields(p, list)
    local out = {}
    for _, path in ipairs(list) do
        local v = p
        for part in path:gmatch("[^.]+") do
            if type(v) == "table" then
                v = v[part]
            else
                v = nil
            end
        end
        out[#out + 1] = tostring(v)
    end
    return table.concat(out, " ")
end

local BC = { "broadcast.communicator", "broadcast.root", "broadcast.gather",
             "broadcast.bucket.hbm_fraction", "broadcast.bucket.max_mib", "broadcast.bucket.mib",
             "broadcast.buffers", "broadcast.per_tensor", "broadcast.wait_load",
             "broadcast.pack_copy", "broadcast.quantize", "broadcast.export_calls",
             "broadcast.load_calls", "finalize_s" }
local RS = { "reshard.stage_groups", "reshard.misc_after_bulk", "reshard.stack_experts",
             "reshard.fused_copy", "reshard.calls", "reshard.plan" }
-- M2N's per-call mechanisms.
local CALLS = { "reshard.barriers", "reshard.serial_calls" }
-- The point-to-point paths (doc/research/p2p-paths.md).
local P2P = { "p2p.plan", "p2p.gather", "p2p.select", "p2p.from", "p2p.verb", "p2p.into",
              "p2p.cpu_loader", "p2p.wait_nonlast", "p2p.receiver_serial", "p2p.pack_copy",
              "p2p.experts_after", "p2p.bucket.hbm_fraction", "p2p.bucket.mib", "p2p.buffers",
              "p2p.loader", "p2p.register", "p2p.register_regions", "p2p.register_every_refit" }
local WANT = {
    ["nemo-rl"] = { "broadcast hybrid p2p", "all first export 0.02 5120 0 2 false false true "
        .. "receiver_full 1 1 0", "2 true true true 1 hierarchical" },
    verl = { "broadcast", "receivers first export 0 0 2048 2 false false true receiver_full "
        .. "1 1 0", "nil nil nil nil nil nil" },
    slime = { "broadcast", "receivers stage stage 0 0 512 1 true true false sender 1 1 0",
              "nil nil nil nil nil nil" },
    miles = { "broadcast p2p", "receivers stage stage 0 0 512 1 true true false sender 1 1 0",
              "nil nil nil nil nil nil" },
    perplexity = { "p2p", "nil nil nil nil nil nil nil nil nil nil nil nil nil 0",
                   "nil nil nil nil nil nil" },
    ["checkpoint-engine"] = { "broadcast p2p", "receivers owner host 0 0 8192 2 false false true "
        .. "sender 0 1 0", "nil nil nil nil nil nil" },
    m2n = { "reshard hierarchical", "nil nil nil nil nil nil nil nil nil nil nil nil nil 0",
            "0 false false false 1 hierarchical" },
}
for _, name in ipairs(framework.PRESETS) do
    local p, want = profiles[name], WANT[name]
    if p then
        tap.is(table.concat(p.strategies, " "), want[1], name .. ": strategies")
        tap.is(fields(p, BC), want[2], name .. ": broadcast path and finalize_s as cited")
        tap.is(fields(p, RS), want[3], name .. ": reshard bulk path as cited")
    end
end
tap.is(profiles.m2n and fields(profiles.m2n, CALLS), "2 true",
    "m2n: two barriers a call, the calls' times summed as its benchmark does")
local P2P_WANT = {
    miles = "reshard stage shard host write weights true true false false false 0 512 1 sglang "
        .. "replica_params 0 false",
    ["nemo-rl"] = "reshard export dense_whole gpu read buffer false false true true false 0.05 0 "
        .. "2 vllm buffers 2 false",
    ["checkpoint-engine"] = "broadcast host shard host read buffer false false false false false "
        .. "0 8192 2 vllm buffers 1 true",
    perplexity = "reshard fsdp shard gpu write weights false false false false true 0 1024 2 "
        .. "vllm none 0 false",
}
for _, name in ipairs({ "miles", "nemo-rl", "checkpoint-engine", "perplexity" }) do
    tap.is(profiles[name] and fields(profiles[name], P2P), P2P_WANT[name],
        name .. ": its point-to-point path as doc/research/p2p-paths.md reads it")
end
tap.is(profiles.verl and profiles.verl.p2p, false, "verl: no p2p section (false)")
tap.is(profiles.m2n and profiles.m2n.broadcast, false, "m2n: no broadcast section (false)")
tap.is(profiles.verl and profiles.verl.reshard, false, "verl: no reshard section (false)")

-- Scenarios: absent, a preset, overrides, a profile file beside the scenario.
local dir = data .. "/framework/"
local plain = refit.load_scenario(dir .. "plain.lua")
tap.is(plain.framework, nil, "a scenario without framework has no profile")
local named = refit.load_scenario(dir .. "nemo-rl.lua")
tap.is(named.framework and fields(named.framework, BC), WANT["nemo-rl"][2],
    "framework = 'nemo-rl' gives the preset's normalised profile")
local over = refit.load_scenario(dir .. "override.lua").framework
tap.is(fields(over, BC), "all first export 0 0 256 1 false false true receiver_full 1 1 0",
    "overrides: buffers 1 and a 256 MiB bucket replace the preset's, the rest is kept")
tap.is(fields(over, RS), WANT["nemo-rl"][3], "overrides: the reshard section is the preset's")
tap.is(#over.sources, #profiles["nemo-rl"].sources + 1,
    "overrides: the scenario's citation is added to the preset's")
tap.is(over.source, refit.models_dir .. "/frameworks/nemo-rl.lua",
    "overrides: source is the preset file")
local custom = refit.load_scenario(dir .. "custom.lua").framework
tap.is(custom.source .. " " .. custom.name .. " " .. fields(custom, RS),
    dir .. "my-profile.lua my-reshard 2 false true false 3 reshard",
    "a profile path is read from the scenario's directory")
tap.is(custom.broadcast, false, "a profile without a broadcast section normalises it to false")
-- A study's table goes through the same path.
local spec = { table = refit.read_scenario(dir .. "nemo-rl.lua"), source = "study.lua",
               line = 3, base_dir = data .. "/framework" }
tap.is(refit.load_scenario_table(spec).framework.name, "nemo-rl",
    "a study's scenario table reads its framework")

tap.done()
