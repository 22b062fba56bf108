#!/bin/sh
# End to end: a study's refit.table output is stored with the study (schema 10: study,
# study_table, run.study_id) exactly as printed, shown at the top of the report, escaped,
# and removed by refit rm with the study's last run; tables printed before the first run are
# stored with it; the report's nav links to each study's section.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/tables.db
study=$SRCDIR/t/data/study/tables.lua
"$REFIT" run "$study" --db "$db" >"$tmp/out" 2>"$tmp/err"
ok $? "refit run stores a study that prints two tables"

# The study row: the path as given, the basename without .lua, the refit that ran it.
is "$(sql "$db" "SELECT id, path, name, refit_version FROM study")" \
    "1|$study|tables|$("$REFIT" --version | sed 's/^refit //')" "one study row, named tables"
is "$(sql "$db" "SELECT count(*) FROM study WHERE started_at GLOB \
'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'")" 1 \
    "started_at is an ISO 8601 UTC time"
is "$(sql "$db" "SELECT group_concat(id || ':' || study_id, ',') FROM run")" "1:1,2:1" \
    "both runs know their study"

# Each table exactly as printed: the texts in order are the whole of stdout.
# sqlite3 ends each value with a newline of its own: one per table, dropped here.
printf '%s' "$(sql "$db" "SELECT group_concat(text, '') FROM study_table ORDER BY ordinal")" \
    >"$tmp/stored"
printf '%s' "$(cat "$tmp/out")" >"$tmp/printed"
ok "$(cmp -s "$tmp/stored" "$tmp/printed"; echo $?)" "the stored texts are what was printed"
is "$(sql "$db" "SELECT count(*) FROM study_table WHERE study_id = 1")" 2 "two tables"
is "$(sql "$db" "SELECT ordinal || '|' || coalesce(title, 'NULL') FROM study_table \
ORDER BY ordinal")" "1|<i>tables</i> & co
2|NULL" "with their titles, the second untitled"
is "$(sql "$db" "SELECT columns_json FROM study_table WHERE ordinal = 1")" \
    '["strategy","infer_gpus","predicted s"]' "the headers as a JSON array"
# The cells as printed: reshard's prediction of t/data/sim/qwen3-30b.lua (also in
# t/study.sh's sweep), a plan-only run's "-", moved bytes scaled to GB with %.2f.
pred=$(sql "$db" "SELECT printf('%.3f', seconds) FROM prediction WHERE run_id = 1")
moved=$(sql "$db" "SELECT printf('%.2f', moved_bytes * 1e-9) FROM run WHERE id = 2")
is "$(sql "$db" "SELECT rows_json FROM study_table WHERE ordinal = 1")" \
    "[[\"reshard\",\"16\",\"$pred\"],[\"broadcast\",\"16\",\"-\"]]" \
    "the rows as JSON arrays of the printed cells"
is "$(sql "$db" "SELECT rows_json FROM study_table WHERE ordinal = 2")" "[[\"2\",\"$moved\"]]" \
    "a scaled and formatted column as printed"
is "$(grep -c "^ *2 *$moved\$" "$tmp/out")" 1 "and that is the printed line"
is "$(sql "$db" "SELECT group_concat(value, ',') FROM study_table, json_each(rows_json, '\$[0]') \
WHERE ordinal = 1")" "reshard,16,$pred" "SQLite's JSON functions read the cells"

# The report: a section for the study before the runs overview, the title escaped.
"$REFIT" report --db "$db" --html "$tmp/r.html" >/dev/null 2>"$tmp/err"
ok $? "refit report succeeds"
study_line=$(grep -n '<h2>Study tables</h2>' "$tmp/r.html" | cut -d: -f1)
runs_line=$(grep -n '<h2>Runs</h2>' "$tmp/r.html" | cut -d: -f1)
ok "$(test -n "$study_line" && test "$study_line" -lt "$runs_line"; echo $?)" \
    "the study's section comes before the runs overview"
# The nav links to the study's section, whose id exists once.
is "$(grep -o '<nav>.*</nav>' "$tmp/r.html" | grep -o '<a href="#study-[^<]*</a>')" \
    '<a href="#study-1">study tables</a>' "the nav links to the study"
is "$(grep -c '<section class="study" id="study-1">' "$tmp/r.html")" 1 \
    "and the link's target is the study's section"
is "$(grep -c '<caption>&lt;i&gt;tables&lt;/i&gt; &amp; co</caption>' "$tmp/r.html")" 1 \
    "the title is escaped"
is "$(grep -c '<i>tables' "$tmp/r.html")" 0 "and never written as HTML"
is "$(grep -F '<tr><th>strategy</th><th>' "$tmp/r.html")" \
    "<tr><th>strategy</th><th>infer_gpus</th><th>predicted s</th></tr>" "the headers"
is "$(grep -F '<tr><td>reshard</td>' "$tmp/r.html")" \
    "<tr><td>reshard</td><td class=\"n\">16</td><td class=\"n\">$pred</td></tr>" \
    "a row, numbers right-aligned and text not"
# A report of runs that are not the study's has no study section.
"$REFIT" sim "$SRCDIR/t/data/sim/qwen3-30b.lua" --db "$db" >/dev/null 2>&1
"$REFIT" report --db "$db" --run 3 --html "$tmp/r3.html" >/dev/null 2>&1
is "$(grep -c '<h2>Study' "$tmp/r3.html")" 0 "a report without the study's runs shows no study"
is "$(grep -c 'href="#study-' "$tmp/r3.html")" 0 "nor a link to one"
is "$(sql "$db" "SELECT coalesce(study_id, 'NULL') FROM run WHERE id = 3")" NULL \
    "refit sim's run has no study"

# refit rm: the study stays while it has runs and goes, with its tables, with its last.
"$REFIT" rm 1 --db "$db" >/dev/null 2>&1
is "$(sql "$db" "SELECT count(*) FROM study")|$(sql "$db" "SELECT count(*) FROM study_table")" \
    "1|2" "removing one of its runs keeps the study and its tables"
"$REFIT" rm 2 --db "$db" >"$tmp/rm" 2>&1
ok $? "removing its last run succeeds"
is "$(sed -n 2p "$tmp/rm" | grep -o 'study_table 2, study 1$')" "study_table 2, study 1" \
    "and says it removed the study and its two tables"
is "$(sql "$db" "SELECT count(*) FROM study")|$(sql "$db" "SELECT count(*) FROM study_table")" \
    "0|0" "both are gone"
is "$(sql "$db" "SELECT count(*) FROM run")" 1 "refit sim's run stays"

# --store summary stores the tables too.
"$REFIT" run "$study" --db "$tmp/summary.db" --store summary >/dev/null 2>&1
ok $? "a summary study succeeds"
is "$(sql "$tmp/summary.db" "SELECT group_concat(stored || ':' || study_id, ',') FROM run")|\
$(sql "$tmp/summary.db" "SELECT count(*) FROM study_table")" "summary:1,summary:1|2" \
    "its runs are summaries of the study, with both tables"
"$REFIT" export --csv study_table --db "$tmp/summary.db" >"$tmp/csv" 2>"$tmp/err"
ok $? "refit export --csv study_table succeeds"
is "$(head -1 "$tmp/csv" | tr -d '\r')" "study_id,ordinal,title,columns_json,rows_json,text" \
    "with the table's columns"

# A title that is not UTF-8 cannot be stored: an error at the study's line, after the run
# before it (its own transaction) and the table printed.
"$REFIT" run "$SRCDIR/t/data/study/badtitle.lua" --db "$tmp/bad.db" >/dev/null 2>"$tmp/err"
ok "$(test $? -ne 0; echo $?)" "a title that is not UTF-8 fails the study"
is "$(cat "$tmp/err")" "refit: $SRCDIR/t/data/study/badtitle.lua:4: refit.table.title: not \
valid UTF-8 (a table is stored as text)" "naming the study line and the field"
is "$(sql "$tmp/bad.db" "SELECT count(*) FROM run")|$(sql "$tmp/bad.db" \
    "SELECT count(*) FROM study_table")" "1|0" "the run stays, no table is stored"
# A table printed before the study's first run is kept and stored with that run, in its
# transaction, as ordinal 1; the table after the run is ordinal 2.
"$REFIT" run "$SRCDIR/t/data/study/early.lua" --db "$tmp/early.db" >"$tmp/out" 2>"$tmp/err"
ok $? "a study printing a table before its first run succeeds"
is "$(sql "$tmp/early.db" "SELECT group_concat(study_id || ':' || ordinal || ':' || \
coalesce(title, 'NULL') || ':' || rows_json, ' ') FROM (SELECT * FROM study_table \
ORDER BY ordinal)")" "1:1:the plan:[[\"reshard\",\"16\"]] 1:2:NULL:[[\"reshard\",\"$(sql \
"$tmp/early.db" "SELECT printf('%.3f', seconds) FROM prediction WHERE run_id = 1")\"]]" \
    "both tables are stored, the early one first, with ordinals 1 and 2"
# Byte for byte: the hex of the stored texts in order against the hex of stdout.
is "$(sql "$tmp/early.db" "SELECT hex(group_concat(text, '')) FROM (SELECT text FROM \
study_table ORDER BY ordinal)")" "$(od -An -tx1 <"$tmp/out" | tr -d ' \n' | tr a-f A-F)" \
    "the stored texts are stdout byte for byte"
is "$(sql "$tmp/early.db" "SELECT count(*) FROM study")|$(sql "$tmp/early.db" \
    "SELECT group_concat(study_id) FROM run")" "1|1" "one study, its one run"

# A study that prints a table and stores no run stores nothing, not even the file.
"$REFIT" run "$SRCDIR/t/data/study/norun.lua" --db "$tmp/norun.db" >"$tmp/out" 2>"$tmp/err"
ok $? "a study that only prints a table succeeds"
is "$(head -1 "$tmp/out")" "never stored" "and prints it"
ok "$(test ! -e "$tmp/norun.db"; echo $?)" "but writes no database"

# The nav's link names the study escaped and points at its section.
abs=$(cd "$SRCDIR" && pwd)
sed "s|\.\./sim/qwen3-30b.lua|$abs/t/data/sim/qwen3-30b.lua|" \
    "$SRCDIR/t/data/study/early.lua" >"$tmp/a<b>&c.lua"
"$REFIT" run "$tmp/a<b>&c.lua" --db "$tmp/esc.db" >/dev/null 2>"$tmp/err"
ok $? "a study named a<b>&c runs"
"$REFIT" report --db "$tmp/esc.db" --html "$tmp/esc.html" >/dev/null 2>"$tmp/err"
ok $? "and its report succeeds"
link=$(grep -o '<nav>.*</nav>' "$tmp/esc.html" | grep -o '<a href="#study-[^<]*</a>')
is "$link" '<a href="#study-1">study a&lt;b&gt;&amp;c</a>' "the nav's link is escaped"
target=$(printf '%s' "$link" | sed 's/^<a href="#\([^"]*\)".*/\1/')
is "$(grep -c "<section class=\"study\" id=\"$target\">" "$tmp/esc.html")" 1 \
    "and points at the study's section"
done_testing
