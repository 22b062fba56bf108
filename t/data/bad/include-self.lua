-- A model file that is itself.
return include("include-self.lua")
