-- Overrides that contain themselves.
local base = refit.scenario("../sim/qwen3-30b.lua")
local loop = {}
loop.infer = loop
local copy = refit.with(base, loop)
