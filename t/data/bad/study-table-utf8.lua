-- A table whose cell is not UTF-8 cannot be stored (t/lua/errors.lua).
local rows = { { name = "fine" }, { name = "bad \xff" } }
refit.table(rows, { "name" })
