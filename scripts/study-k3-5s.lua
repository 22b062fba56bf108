-- Kimi K3 capacity planning: which inference size and layout refit the 2.8T model in under
-- 5 s from 2048 training GPUs (Megatron TP8 PP16 EP64), on GB200 NVL72 versus DGX H100?
-- Every row is a layout that fits (sim/memory.c), found by refit.search (README, Layout
-- search): per cluster, inference size and dtype, every TP x DP x EP split vLLM accepts
-- without pipeline stages (vLLM serves this family with TP inside a node and DP attention
-- with EP across; `refit search --pp` lists pipelines too) is estimated, the best is
-- simulated in full with auto and stored (label study-k3-5s).
-- GB200: no engine of Kimi K3 that fits divides a 72-GPU rack (engines of 32 GPUs or more
-- whose size is a power of two), so they are placed rack by rack (infer.placement =
-- "domain", the default: one 64-GPU engine or two 32-GPU engines a rack, the rest idle).
-- Run: refit run scripts/study-k3-5s.lua (about 10 minutes on two cores).
local rows = {}
for _, system in ipairs({ "gb200-nvl72", "dgx-h100" }) do
    local per_node = system == "dgx-h100" and 8 or 4
    -- GB200's inference GPUs start at the first rack after the training GPUs (29 x 72).
    local first = system == "dgx-h100" and 2048 or 2088
    -- The base layout's 64 engines of 64 GPUs take a rack each on GB200 (64 x 72 GPUs);
    -- the search grows the cluster further where a candidate needs it.
    local span = system == "dgx-h100" and 4096 or 64 * 72
    local sc = {
        model = "kimi-k3",
        cluster = { system = system, nodes = (first + span) // per_node },
        train = { gpus = 2048, tp = 8, pp = 16, ep = 64 },
        infer = { gpus = 4096, first_gpu = first, tp = 8, dp = 8, ep = 64 },
        strategy = "auto",
    }
    for _, gpus in ipairs({ 1024, 2048, 4096 }) do
        for _, dtype in ipairs({ "bf16", "fp8" }) do
            refit.progress("%s: %d inference GPUs, %s", system, gpus, dtype)
            local r = refit.search(sc, { gpus = { gpus }, dtypes = { dtype }, pp = { 1 }, top = 1,
                                         label = "study-k3-5s" })
            -- How many meet 5 s (by prediction, else estimate), and the slowest estimate.
            local meet, slowest = 0, nil
            for _, l in ipairs(r.layouts) do
                local s = l.predicted_s or l.estimate_s
                if s <= 5 then
                    meet = meet + 1
                end
                slowest = math.max(slowest or s, s)
            end
            local best = r.layouts[1] or {}
            rows[#rows + 1] = {
                cluster = system, gpus = gpus, dtype = dtype, fit = r.fit, meet = meet,
                layout = best.layout, engines = best.engines, weights = best.weights_bytes,
                kv = best.kv_headroom_bytes, predicted_s = best.predicted_s,
                bound_s = best.lower_bound_s,
                ok = best.predicted_s and (best.predicted_s <= 5 and "yes" or "no") or "-",
                slowest = slowest,
                note = best.spans and "spans racks" or "",
                run_id = best.run_id,
            }
        end
    end
end
refit.table(rows, { "cluster", { "gpus", header = "infer GPUs" }, "dtype",
    { "fit", header = "layouts fit" }, { "meet", header = "<= 5 s" },
    { "layout", header = "best layout" }, "engines",
    { "weights", header = "weights GB", scale = 1e-9, format = "%.1f" },
    { "kv", header = "KV GB", scale = 1e-9, format = "%.1f" },
    { "predicted_s", header = "predicted s", format = "%.2f" },
    { "bound_s", header = "bound s", format = "%.2f" }, { "ok", header = "best <= 5 s" },
    { "slowest", header = "slowest ~s", format = "%.2f" }, "run_id", "note" },
    "Kimi K3 refit from 2048 training GPUs: the layouts that fit, without pipeline stages "
    .. "(<= 5 s: by prediction or estimate; the best simulated in full with auto)")
