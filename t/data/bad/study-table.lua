-- A study printing a string as a table.
refit.table("rows", { "strategy" })
