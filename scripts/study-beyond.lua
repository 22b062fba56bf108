-- What-ifs beyond full weights: for DeepSeek-V3 (256 -> 256 H100, 128 -> 128 GB200) and Kimi
-- K3 (2048 -> 4096 on both), how long does a refit take moving full BF16, full FP8, a sparse
-- delta of the changed elements (as a bitmap or as coordinates, at 1%, 5% and 30% of each
-- box), or LoRA adapters of rank 16, 64 and 256 on the attention projections; and at what
-- density does a delta stop beating full FP8?
--
-- The mechanisms (README, Scenarios: update): a delta's box of n elements with k changed
-- takes ceil(n / 8) + 2k bytes as a bitmap and 6k as coordinates (BF16 values), against n
-- bytes (plus 1/16384 of block scales) in FP8, and adds the senders' diff (reading the new
-- and the last sent weights, 4 bytes an element in BF16) and the receivers' scatter (a
-- 32-byte sector per change) at the GPU's HBM rate. The crossover is found by bisection on
-- the simulated time (auto encoding, which takes the smaller of the two per box).
-- Overlapped rows compare their engine stall (what generation loses) with full FP8's refit;
-- the others their refit time. Run: refit run scripts/study-beyond.lua (Kimi K3's points
-- take most of it).
-- `dtype`: the engines' dtype for the deltas and adapters (a delta's values travel in it):
-- Kimi K3's 2.8T weights do not fit the engines in BF16, so its deltas are of FP8 values.
local cases = {
    { model = "deepseek-v3", cluster = "dgx-h100", file = "dsv3-h100.lua", dtype = "bf16" },
    { model = "deepseek-v3", cluster = "gb200-nvl72", file = "dsv3-gb200.lua", dtype = "bf16" },
    { model = "kimi-k3", cluster = "dgx-h100", file = "kimi-k3-h100-ep64.lua", dtype = "fp8" },
    { model = "kimi-k3", cluster = "gb200-nvl72", file = "kimi-k3-gb200.lua", dtype = "fp8" },
}
-- MLA's column- and row-parallel attention projections (q_a_proj and kv_a_proj_with_mqa are
-- replicated in vLLM, so LoRA does not target them here).
local ATTENTION = { "q_b_proj", "kv_b_proj", "o_proj" }

local rows, crossings = {}, {}
for _, c in ipairs(cases) do
    local base = refit.scenario(c.file)
    local function run(what, changes, note)
        refit.progress("%s on %s: %s", c.model, c.cluster, what)
        local r = refit.sim(refit.with(base, changes), { label = "study-beyond" })
        r.case, r.update, r.note = c.model .. " " .. c.cluster, what, note
        return r
    end
    local engine = { dtype = c.dtype }
    local full_fp8 = run("full fp8", { infer = { dtype = "fp8" } })
    -- BF16 engines that do not fit are simulated as a what-if (allow_overcommit), and say so.
    local bf16 = c.dtype == "bf16" and run("full bf16", { infer = { dtype = "bf16" } })
        or run("full bf16", { infer = { dtype = "bf16" }, allow_overcommit = true },
            "does not fit: a what-if")
    local variants = { bf16, full_fp8 }
    for _, d in ipairs({ 0.01, 0.05, 0.3 }) do
        for _, enc in ipairs({ "bitmap", "coo" }) do
            variants[#variants + 1] = run(string.format("delta %g %s, %s", d, enc, c.dtype),
                { infer = engine, update = { kind = "delta", density = d, encoding = enc } })
        end
    end
    -- Full FP8 that overlaps generation: engines refitted one at a time, or all at once while
    -- they keep generating (no generation traffic figure: the ports are the refit's).
    for _, engines in ipairs({ "rolling", "all" }) do
        variants[#variants + 1] = run("full fp8, " .. engines .. " engines",
            { infer = { dtype = "fp8" }, overlap = { engines = engines } })
    end
    for _, rank in ipairs({ 16, 64, 256 }) do
        variants[#variants + 1] = run(string.format("lora r%d", rank),
            { infer = engine, update = { kind = "lora", rank = rank, targets = ATTENTION } })
    end
    for _, r in ipairs(variants) do
        -- An overlapped refit wins on its stall, what generation loses.
        local s = r.stall_s or r.predicted_s
        r.vs_fp8 = s / full_fp8.predicted_s
        r.wins = s < full_fp8.predicted_s and "yes" or "no"
        rows[#rows + 1] = r
    end
    -- The density at which a delta (auto encoding) takes as long as full FP8.
    -- Its mechanism: where the delta's wire bytes are still well below FP8's there, the
    -- diff and scatter close the gap; else the encoded bytes themselves do.
    local lo, hi, at = 0.0, 1.0, nil
    for _ = 1, 8 do
        local mid = math.floor((lo + hi) / 2 * 1e6 + 0.5) / 1e6
        local r = run(string.format("delta %g auto, %s", mid, c.dtype), { infer = engine,
            update = { kind = "delta", density = mid, encoding = "auto" } })
        if r.predicted_s and r.predicted_s < full_fp8.predicted_s then lo, at = mid, r else hi = mid end
    end
    local bytes = at and at.payload_bytes / full_fp8.payload_bytes or 0
    crossings[#crossings + 1] = { case = c.model .. " " .. c.cluster, density = lo,
        fp8_s = full_fp8.predicted_s, bytes = bytes,
        mechanism = bytes < 0.9 and "the diff and scatter at HBM rate"
            or "the encoded bytes on the wire" }
end
refit.table(rows, { "case", "update",
    { "payload_bytes", header = "payload GB", scale = 1e-9, format = "%.1f" },
    { "predicted_s", header = "predicted s", format = "%.3f" },
    { "lower_bound_s", header = "bound s", format = "%.3f" },
    { "stall_s", header = "stall s", format = "%.3f" },
    { "staleness_s", header = "stale s", format = "%.3f" },
    { "vs_fp8", header = "stall / full fp8", format = "%.2f" },
    { "wins", header = "beats fp8" }, "note" },
    "Beyond full weights: each update against full FP8 (auto, the scenario's layout)")
refit.table(crossings, { "case", { "density", header = "crossover density", format = "%.4f" },
    { "fp8_s", header = "full fp8 s", format = "%.3f" },
    { "bytes", header = "wire bytes / fp8's", format = "%.2f" }, "mechanism" },
    "Where a delta stops beating full FP8 (bisection on the simulated time)")
