-- The study of t/study-table.sh's early tables: a refit.table printed before the study's
-- first stored run (kept and stored with that run), then a run, then a table of it.
refit.table({ { what = "reshard", gpus = 16 } }, { "what", "gpus" }, "the plan")
local base = refit.scenario("../sim/qwen3-30b.lua")
local sim = refit.sim(base, { strategy = "reshard", label = "early" })
refit.table({ sim }, { "strategy", { "predicted_s", header = "predicted s" } })
