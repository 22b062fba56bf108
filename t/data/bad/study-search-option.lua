-- A misspelt option of refit.search.
local base = refit.scenario("../sim/qwen3-30b.lua")
refit.search(base, { gpu = { 8 } })
