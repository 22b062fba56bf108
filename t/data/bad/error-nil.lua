-- error() given nil.
local x = 1
error(nil)
