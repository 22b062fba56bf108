-- The study of t/study-table.sh that prints a table and stores no run: nothing is stored.
refit.table({ { what = "nothing" } }, { "what" }, "never stored")
