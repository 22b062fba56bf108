-- A study long enough to be cut short (t/study-jobs.sh): the quick start's question, four
-- times, a few seconds a point.
local base = refit.scenario("../../../scripts/dsv3-h100.lua")
for _, strategy in ipairs({ "reshard", "hierarchical", "broadcast", "reshard" }) do
    refit.sim(base, { strategy = strategy, label = "cut" })
end
