-- Kimi K3 capacity planning: which inference size and layout refit the 2.8T model in under
-- 5 s from 2048 training GPUs (TP8 PP16 EP64), on GB200 NVL72 versus DGX H100?
-- Strategy reshard with local sources and PXN off (what auto picks for this traffic on
-- H100; see NEWS), to keep the sweep to minutes. Run: refit run scripts/study-k3-5s.lua
local rows = {}
for _, system in ipairs({ "gb200-nvl72", "dgx-h100" }) do
    local per_node = system == "dgx-h100" and 8 or 4
    for _, gpus in ipairs({ 1024, 2048, 4096 }) do
        for _, tp in ipairs({ 8, 16 }) do
            local sc = {
                model = "kimi-k3",
                cluster = { system = system, nodes = (2048 + gpus) // per_node,
                            fabric = { pxn = false } },
                train = { gpus = 2048, tp = 8, pp = 16, ep = 64 },
                infer = { gpus = gpus, first_gpu = 2048, tp = tp, ep = tp },
                sources = "local",
            }
            refit.progress("%s %d GPUs TP%d", system, gpus, tp)
            local r = refit.sim(sc, { strategy = "reshard", label = "study-k3-5s" })
            r.layout = string.format("TP%d EP%d", tp, tp)
            r.meets = r.predicted_s <= 5 and "yes" or "no"
            rows[#rows + 1] = r
        end
    end
end
refit.table(rows, { "cluster", "infer_gpus", "layout",
    { "predicted_s", header = "predicted s", format = "%.2f" },
    { "lower_bound_s", header = "bound s", format = "%.2f" }, { "meets", header = "<= 5 s" },
    "bottleneck" }, "Kimi K3 refit, 2048 training GPUs, reshard with local sources")
