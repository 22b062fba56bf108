-- A misspelt option, passed through a function of the study.
local base = refit.scenario("../sim/qwen3-30b.lua")
local function run(sc)
    local r = refit.sim(sc, { stratgy = "hierarchical" })
    return r
end
run(base)
