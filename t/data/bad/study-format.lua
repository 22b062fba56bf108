-- A column format that does not fit the column's values.
refit.table({ { strategy = "reshard" } },
    { { "strategy", format = "%d" } })
