-- A pattern that backtracks without end (issue 25): Lua's own string.find takes minutes
-- in C, where no instruction is counted; refit's stops at the budget, naming line 4.
local s = string.rep("a", 30000)
local hit = string.find(s, string.rep("a*", 30) .. "b")
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 4, pp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    label = hit,
}
