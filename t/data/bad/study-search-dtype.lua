-- A dtype refit.search does not know.
local base = refit.scenario("../sim/qwen3-30b.lua")
local r = refit.search(base, { gpus = { 8, 16 },
    dtypes = { "fp4" } })
