-- A framework profile file whose name is computed by a match that backtracks without end.
local name = string.rep("p", 25000):match(string.rep("p?", 40) .. string.rep("p", 40) .. "q")
return framework.profile{
    name = name or "hostile",
    strategies = { "reshard" },
    reshard = { plan = "reshard", stage_groups = 0, calls = 1 },
    sources = {
        { field = "strategies", repo = "example/rl", commit = "0000000", file = "a.py",
          func = "f", says = "reshard only" },
    },
}
