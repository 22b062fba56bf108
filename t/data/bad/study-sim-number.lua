-- A study handing refit.sim a number.
local base = refit.scenario("../sim/qwen3-30b.lua")
refit.sim(42)
