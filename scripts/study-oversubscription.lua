-- What if the fabric is oversubscribed? DeepSeek-V3, 256 -> 256 H100 (scripts/dsv3-h100.lua),
-- leaf-to-spine oversubscription 1:1 to 4:1, with and without NCCL's PXN (which keeps a
-- message on one rail, off the spine). Run: refit run scripts/study-oversubscription.lua
local base = refit.scenario("dsv3-h100.lua")
local rows = {}
for _, ratio in ipairs({ 1, 2, 4 }) do
    for _, pxn in ipairs({ true, false }) do
        local r = refit.sim(refit.with(base, {
            cluster = { fabric = { oversubscription = ratio, pxn = pxn } } }),
            { strategy = "reshard", label = "study-oversubscription" })
        r.ratio = string.format("%d:1", ratio)
        r.pxn = pxn and "on" or "off"
        rows[#rows + 1] = r
    end
end
refit.table(rows, { "ratio", "pxn", { "predicted_s", header = "predicted s", format = "%.2f" },
    { "lower_bound_s", header = "bound s", format = "%.2f" },
    { "fabric_bytes", header = "fabric TB", scale = 1e-12, format = "%.2f" }, "bottleneck" },
    "Fabric oversubscription, DeepSeek-V3 reshard, 256 -> 256 H100")
