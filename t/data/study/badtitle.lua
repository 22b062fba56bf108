-- A refit.table whose title is not UTF-8 cannot be stored (t/study-table.sh).
local base = refit.scenario("../sim/qwen3-30b.lua")
local plan = refit.plan(base, { strategy = "broadcast" })
refit.table({ plan }, { "strategy" }, "bad \xff")
