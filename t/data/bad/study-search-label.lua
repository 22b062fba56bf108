-- A search label that is not UTF-8.
local base = refit.scenario("../sim/qwen3-30b.lua")
refit.search(base, { label = "bad \xff" })
