-- The headline as NeMo RL runs it: hybrid (nccl_reshard of the FFN weights, the rest
-- by packed broadcast) against gather-and-broadcast, with `framework = "nemo-rl"`
-- (models/frameworks/nemo-rl.lua), on the four NeMo RL layouts. NeMo RL's published band is
-- 2.7x to 5.7x; beside it refit's own plans (no profile), which no framework runs.
-- Run: refit run scripts/study-nemo-rl.lua (a few minutes: 940 broadcast rounds each).
local rows = {}
for _, name in ipairs({ "dsv3-h100", "dsv3-gb200", "qwen3-235b-h100", "qwen3-235b-gb200" }) do
    local base = refit.scenario(name .. ".lua")
    local row = { layout = name }
    for _, fw in ipairs({ "nemo-rl", "none" }) do
        local sc = fw == "none" and base or refit.with(base, { framework = fw })
        for _, s in ipairs({ "broadcast", "hybrid" }) do
            refit.progress("%s %s %s", name, fw, s)
            local r = refit.sim(sc, { strategy = s, label = "study-nemo-rl " .. fw })
            row[fw .. " " .. s] = r.predicted_s
        end
        row[fw .. " x"] = row[fw .. " broadcast"] / row[fw .. " hybrid"]
    end
    local x = row["nemo-rl x"]
    row.band = (x >= 2.7 * 0.8 and x <= 5.7 * 1.2) and "in" or "OUT"
    rows[#rows + 1] = row
end
refit.table(rows, { "layout",
    { "nemo-rl broadcast", header = "NeMo RL broadcast s", format = "%.2f" },
    { "nemo-rl hybrid", header = "NeMo RL hybrid s", format = "%.2f" },
    { "nemo-rl x", header = "speedup", format = "%.2fx" },
    { "band", header = "2.7-5.7x (+-20%)" },
    { "none broadcast", header = "refit broadcast s", format = "%.2f" },
    { "none hybrid", header = "refit hybrid s", format = "%.2f" },
    { "none x", header = "refit speedup", format = "%.2fx" } },
    "Hybrid vs gather-and-broadcast as NeMo RL runs them (framework = \"nemo-rl\")")
