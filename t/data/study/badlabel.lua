-- A study whose second run has a label that is not UTF-8: run 1 is stored, then the error
-- names this file and line 5.
local base = refit.scenario("../sim/qwen3-30b.lua")
refit.plan(base, { strategy = "reshard", label = "first" })
refit.plan(base, { label = "bad \xff label" })
