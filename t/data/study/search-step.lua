-- refit.search and refit.estimate under a framework profile (t/search-step.sh): the search
-- ranks by the step, and refit.estimate gives one layout's step estimate alone.
local base = refit.scenario("../search/qwen3-32b-nemo-rl.lua")
local r = refit.search(base, { gpus = { 8, 16 }, top = 1, label = "study-step" })
local best = r.layouts[1]
print(string.format("best: %s on %d GPUs, step %.9f s, wire %.9f s, estimate %.9f s",
    best.layout, best.gpus, best.step_s, best.wire_s, best.estimate_step_s))
local e = refit.estimate(refit.with(base, { infer = { gpus = 8, tp = 8 } }))
print(string.format("estimate: step %.9f s, wire %.9f s", e.estimate_step_s, e.estimate_s))
