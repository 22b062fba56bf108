-- The other half of include-a.lua's cycle, by a path that spells it differently.
return include("../bad/./include-a.lua")
