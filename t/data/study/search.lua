-- refit.search and refit.estimate from a study (t/search.sh): the search test's scenario on 8
-- and 16 inference GPUs, the best two simulated and stored; one layout estimated alone.
local base = refit.scenario("../search/qwen3-30b.lua")
local r = refit.search(base, { gpus = { 8, 16 }, top = 2, label = "study-search" })
refit.table(r.layouts, { "rank", "layout", "gpus",
    { "predicted_s", header = "predicted s", format = "%.3f" },
    { "estimate_s", header = "estimate s", format = "%.3f" } },
    string.format("search: %d enumerated, %d fit, %d simulated", r.enumerated, r.fit, r.simulated))
local e = refit.estimate(refit.with(base, { infer = { gpus = 8, tp = 4 } }))
print(string.format("estimate: fits %s, weights %d, bound %.3f s, estimate %.3f s", e.fits,
    e.weights_bytes, e.bound_s, e.estimate_s))
