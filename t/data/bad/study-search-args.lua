-- refit.search options that are not a table.
local base = refit.scenario("../sim/qwen3-30b.lua")
refit.search(base, 5)
