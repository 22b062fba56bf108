-- A scenario table that contains itself, handed straight to refit.sim.
local sc = refit.scenario("../sim/qwen3-30b.lua")
sc.cluster.fabric = sc
refit.sim(sc)
