-- An estimate is not stored: a label is a mistake.
local base = refit.scenario("../sim/qwen3-30b.lua")
refit.estimate(base, { label = "x" })
