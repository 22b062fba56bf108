-- What if inference runs in FP8? BF16 vs FP8 (e4m3 weights + 128x128 block scales, converted
-- by the senders) for DeepSeek-V3 on DGX H100 (NeMo-RL's layout, scripts/dsv3-h100.lua) and
-- Kimi K2 on the same layout. Run: refit run scripts/study-fp8.lua
local rows = {}
for _, model in ipairs({ "deepseek-v3", "kimi-k2" }) do
    local base = refit.with(refit.scenario("dsv3-h100.lua"), { model = model })
    for _, dtype in ipairs({ "bf16", "fp8" }) do
        local r = refit.sim(refit.with(base, { infer = { dtype = dtype } }),
            { strategy = "reshard", label = "study-fp8" })
        r.dtype = dtype
        rows[#rows + 1] = r
    end
end
refit.table(rows, { "model", "dtype",
    { "payload_bytes", header = "payload TB", scale = 1e-12, format = "%.2f" },
    { "fabric_bytes", header = "fabric TB", scale = 1e-12, format = "%.2f" },
    { "predicted_s", header = "predicted s", format = "%.2f" },
    { "lower_bound_s", header = "bound s", format = "%.2f" }, "bottleneck" },
    "BF16 vs FP8 inference, reshard, 256 -> 256 H100")
