-- Broadcast vs reshard vs hierarchical vs auto across model sizes, 8B to 2.8T, on DGX H100:
-- each model on a layout used in practice for its size (models.md §8), inference on as many
-- GPUs as training (Kimi K3: 512). Every layout fits in the GPUs' memory (refit's memory
-- lines): Kimi K2 and K3 are served by engines with attention data parallelism and wide
-- expert parallelism (TP8 x DP8, EP64: 34 GB of weights per GPU for K2; TP8 x DP16, EP128:
-- 55 GB for K3), as DeepSeek-style MoE models are served; TP16 EP16 would need 130 and
-- 350 GB per 80 GB GPU. Run: refit run scripts/study-strategies.lua (minutes: the largest
-- models simulate millions of flows per strategy).
local cases = {
    { "llama3-8b", { gpus = 8, tp = 1, pp = 2 }, { gpus = 8, tp = 1 } },
    { "qwen3-32b", { gpus = 16, tp = 4, pp = 4 }, { gpus = 16, tp = 4 } },
    { "llama3-70b", { gpus = 64, tp = 4, pp = 4 }, { gpus = 64, tp = 8 } },
    { "qwen3-235b-a22b", { gpus = 128, tp = 2, cp = 2, pp = 8, ep = 16 }, { gpus = 128, tp = 16 } },
    { "deepseek-v3", { gpus = 256, tp = 1, pp = 16, ep = 16 }, { gpus = 256, tp = 32 } },
    { "kimi-k2", { gpus = 256, tp = 8, pp = 8, cp = 4, ep = 32 }, { gpus = 256, tp = 8, dp = 8, ep = 64 } },
    { "kimi-k3", { gpus = 2048, tp = 8, pp = 16, ep = 64 }, { gpus = 512, tp = 8, dp = 16, ep = 128 } },
}
local rows = {}
for _, c in ipairs(cases) do
    local train, infer = c[2], c[3]
    infer.first_gpu = train.gpus
    local nodes = (train.gpus + infer.gpus + 7) // 8
    local sc = { model = c[1], cluster = { system = "dgx-h100", nodes = nodes },
                 train = train, infer = infer }
    local row = { model = c[1], gpus = string.format("%d -> %d", train.gpus, infer.gpus) }
    for _, s in ipairs({ "broadcast", "reshard", "hierarchical", "auto" }) do
        refit.progress("%s %s", c[1], s)
        local r = refit.sim(sc, { strategy = s, label = "study-strategies" })
        row[s] = r.predicted_s
        row.bound = r.lower_bound_s
        row.params = r.model_params
    end
    rows[#rows + 1] = row
end
refit.table(rows, { "model", { "params", header = "params B", scale = 1e-9, format = "%.0f" },
    "gpus", { "broadcast", format = "%.2f" }, { "reshard", format = "%.2f" },
    { "hierarchical", format = "%.2f" }, { "auto", format = "%.2f" },
    { "bound", header = "bound", format = "%.2f" } },
    "Predicted refit seconds by strategy, DGX H100")
