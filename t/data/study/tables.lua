-- The study of t/study-table.sh: two runs of the simulator test's scenario and two
-- refit.table calls, one titled with HTML in it (the report must escape it) and one not.
local base = refit.scenario("../sim/qwen3-30b.lua")
local sim = refit.sim(base, { strategy = "reshard", label = "tables" })
local plan = refit.plan(base, { strategy = "broadcast", label = "tables" })
refit.table({ sim, plan }, { "strategy", "infer_gpus", { "predicted_s", header = "predicted s" } },
    "<i>tables</i> & co")
refit.table({ plan }, { "run_id", { "moved_bytes", header = "moved GB", scale = 1e-9,
    format = "%.2f" } })
