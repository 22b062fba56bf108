-- A study that builds an inconsistent scenario: the error names this file and line 4.
local base = refit.scenario("../sim/qwen3-30b.lua")
local wrong = refit.with(base, { infer = { tp = 3 } })
refit.sim(wrong)
