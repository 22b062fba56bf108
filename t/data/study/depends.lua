-- A study for `refit run --jobs` (t/study-jobs.sh): one scenario table changed between
-- calls (each point must keep the table as it was at its call), a point chosen from an
-- earlier result (the dry pass cannot know it: the replay computes it), results used in
-- arithmetic and formats, and a table of them all.
local base = refit.scenario("../sim/qwen3-30b.lua")
local sc = refit.with(base, {})
local rows = {}
for _, gpus in ipairs({ 8, 16 }) do
    sc.infer.gpus = gpus
    rows[#rows + 1] = refit.sim(sc, { label = "table reused" })
end
local first = rows[1]
print(string.format("first: %d GPUs, %.6f s, %d runs so far", first.infer_gpus,
    first.predicted_s, first.run_id))
local bigger = refit.with(base, { infer = { gpus = first.infer_gpus * 2 } })
rows[#rows + 1] = refit.sim(bigger, { label = "chosen from a result" })
rows[#rows + 1] = refit.plan(base, { strategy = "broadcast", label = "after" })
refit.table(rows, { "run_id", "infer_gpus", "label", { "predicted_s", format = "%.6f" },
    "transfers" }, "depends")
