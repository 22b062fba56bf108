-- A profile whose reshard section cites nothing.
return framework.profile{
    name = "uncited",
    strategies = { "reshard" },
    reshard = { plan = "reshard", stage_groups = 0, calls = 1 },
    sources = {
        { field = "strategies", repo = "example/rl", commit = "0000000", file = "a.py",
          func = "f", says = "reshard only" },
    },
}
