-- A study merging overrides into nothing.
local copy = refit.with(nil, { infer = { gpus = 16 } })
