-- A model file that includes one that includes it back.
return include("include-b.lua")
