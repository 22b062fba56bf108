-- A small study for the end-to-end test: the simulator test's scenario with 8 and 16
-- inference GPUs, reshard and hierarchical, tabulated.
local base = refit.scenario("../sim/qwen3-30b.lua")
local rows = {}
for _, gpus in ipairs({ 8, 16 }) do
    for _, strategy in ipairs({ "reshard", "hierarchical" }) do
        local r = refit.sim(refit.with(base, { infer = { gpus = gpus } }),
            { strategy = strategy, label = "sweep" })
        rows[#rows + 1] = r
    end
end
local plan = refit.plan(base, { strategy = "broadcast", label = "plan only" })
rows[#rows + 1] = plan
refit.table(rows, { "infer_gpus", "strategy", { "predicted_s", header = "predicted s" },
    { "fabric_bytes", header = "fabric GB", scale = 1e-9, format = "%.1f" } }, "sweep")
print("model params " .. refit.model("qwen3-30b-a3b").params)
