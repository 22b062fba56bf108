-- A scenario must return a table.
local gpus = 8
return gpus
