-- A profile file of one's own, read from the naming scenario's directory (custom.lua): a
-- framework that reshards only, two stages at a time, stacking experts.
return framework.profile{
    name = "my-reshard",
    strategies = { "reshard" },
    reshard = { plan = "reshard", stage_groups = 2, stack_experts = true, calls = 3 },
    sources = {
        { field = "strategies", repo = "example/my-rl", commit = "0000000", file = "sync.py",
          func = "refit", says = "reshard only" },
        { field = "reshard", repo = "example/my-rl", commit = "0000000", file = "sync.py",
          func = "refit", says = "reshard per stage pair, experts stacked first" },
    },
}
