-- A study asking for a model that does not exist.
local m = refit.model("no-such-model")
