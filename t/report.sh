#!/bin/sh
# End to end: `refit report` on the database of a `refit sim --compare` run, with a
# measurement added by hand; the page is checked as text and rendered in headless Chromium.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/report.db
html=$tmp/report.html
scen=$SRCDIR/t/data/sim/qwen3-30b.lua
# A label that would break the page if any string went in unescaped.
evil='<i>evil</i> & "quoted" '\''single'\'''

"$REFIT" sim "$scen" --db "$db" --compare --label "$evil" >/dev/null
ok $? "refit sim --compare builds a database of 5 runs"
"$REFIT" report --help | grep -q '^usage: refit report --db FILE'
ok $? "refit report --help prints the usage"

"$REFIT" report --db "$db" --html "$html" >/dev/null
ok $? "refit report writes the page"
count() { grep -o "$1" "$2" | wc -l | tr -d ' '; }
for id in runs comparison run-1 run-5 heatmap-1 heatmap-5 timeline-1 timeline-5; do
    ok "$(grep -q "id=\"$id\"" "$html"; echo $?)" "the page has section $id"
done
is "$(count '<svg' "$html")" 11 "an SVG per plot: comparison, and per run links and rounds"
phases() { sed -n "/id=\"phases-$1\"/,/<\\/table>/p" "$html" | sed -n 's|^<tr><td>\([a-z]*\)</td>.*|\1|p' |
    tr '\n' ' '; }
is "$(phases 1)" "gather local broadcast " "broadcast's phases: gather, then broadcast"
is "$(phases 3)" "deliver fanout " "hierarchical's phases: deliver to leaders, then fan out"
is "$(sed -n '/id="phases-2"/,/<\/table>/p' "$html" | grep -o '<td class="n">[0-9.]*</td></tr>' |
      grep -o '[0-9.]*')" "$(sql "$db" "SELECT printf('%.2f', bytes / 1e9) FROM predicted_phase
                                        WHERE run_id = 2 AND phase = 'deliver'")" \
    "a phase's gigabytes are the stored ones"
is "$(count 'id="predicted-vs-measured"' "$html")" 0 "no predicted-vs-measured without measurements"
is "$(grep -c '<i>evil' "$html")" 0 "the label never appears unescaped"
is "$(count '&lt;i&gt;evil&lt;/i&gt; &amp; &quot;quoted&quot; &#39;single&#39;' "$html")" 10 \
    "it appears escaped in the overview and in every run's table"
is "$(grep -Eic '<script|<link|<img|<iframe|(src|href)=["'\'']?(https?:)?//' "$html")" 0 \
    "self-contained: no script and nothing loaded from elsewhere"
is "$(grep -c '<?xml' "$html")" 0 "the SVGs are inlined without their XML prolog"

# The runs table names each run's scenario: cluster and nodes, GPUs, dtypes, both layouts.
is "$(grep -o '<tr><td><a href="#run-1">1</a></td>.*' "$html" |
      sed 's|.*<td>nic_out\[node 0 nic 0\]</td><td>||')" \
    "$(sql "$db" "SELECT printf('%s x %d</td><td class=\"n\">%d / %d</td><td>%s / %s</td><td>%s</td><td>%s</td></tr>',
                 cluster_system, cluster_nodes, train_gpus, infer_gpus, train_dtype,
                 infer_dtype, train_layout, infer_layout) FROM run WHERE id = 1")" \
    "the runs table has cluster, GPUs, dtypes and layouts after the bottleneck"

# Timelines past 100 rounds draw bins of consecutive rounds: broadcast's 148 rounds (run 1)
# are 74 bars of 2, hierarchical's 6 rounds (run 3) a bar each (a polygon more: the key).
bars() { sed -n "/id=\"timeline-$1\"/,/<\/figure>/p" "$html" |
    grep -c "<polygon fill = 'rgb( 78, 121, 167)'"; }
is "$(sql "$db" "SELECT group_concat(rounds, ' ') FROM run WHERE id IN (1, 3)")" "148 6" \
    "runs 1 and 3 have 148 and 6 rounds"
is "$(bars 1)|$(grep -c '^<figcaption>Run 1: predicted start and finish of each round (148 rounds in 74 bars of 2 consecutive rounds).</figcaption>$' "$html")" \
    "75|1" "148 rounds: 74 bars of 2 rounds, the caption says so"
is "$(bars 3)|$(grep -c '^<figcaption>Run 3: predicted start and finish of each round.</figcaption>$' "$html")" \
    "7|1" "6 rounds: a bar each"
is "$(sed -n '/id="timeline-3"/,/<\/figure>/p' "$html" | grep -o '<text> *-*[0-9]</text>' |
      sed 's|<text> *\(.*\)</text>|\1|' | head -8 | tr '\n' ' ')" "-1 0 1 2 3 4 5 6 " \
    "a round tic each, never a fractional round"

# The heatmap's cells are the run's links, coloured by their utilisation. A run computed by
# hand (t/sim.sh): tiny-llama from GPU 0 to GPU 1 on the localhost preset, 8655360 bytes
# in 3.903144 ms through NVLink ports of 2.5 GB/s (utilisation 3.462144 / 3.903144 = 0.887)
# and copy engines of 8.5 GB/s (0.261). Rows are link kinds in the order links are
# numbered (nvl_out, nvl_in, copy), columns GPUs. The palette on [0:1] puts 0.887 between
# #2171b5 (0.75) and #08306b (1): rgb(19,77,140); 0.261 between #c6dbef (0.25) and #6baed6
# (0.5): rgb(194,217,238). An empty heatmap, or one of other figures, fails.
hand=$SRCDIR/t/data/sim/tiny-hand.lua
"$REFIT" sim "$hand" --db "$tmp/hand.db" >/dev/null &&
    "$REFIT" report --db "$tmp/hand.db" --html "$tmp/hand.html" >/dev/null
ok $? "a report of the hand-computed run"
cells() { # cells PAGE ID COLUMNS ROWS: "column row rgb(r,g,b)" per cell of the heatmap ID
    sed -n "/id=\"$2\"/,/<\/svg>/p" "$1" | awk -F"'" -v nx="$3" -v ny="$4" '
        # The plot frame (the first closed black path) maps coordinates to cells.
        !frame && /<path stroke=.black.  d=.M.* Z/ {
            split($4, p, /[ML, ]+/); left = p[2]; top = p[3]; right = p[6]; bottom = p[5]
            frame = 1; next }
        # Cells are filled polygons inside the frame; the colour bar is right of it.
        frame && /<polygon fill = / {
            split($4, p, /[ ,]/)
            if (p[1] + 0 >= right + 0) next
            rgb = $2; gsub(/ /, "", rgb)
            printf "%d %d %s\n", (p[1] - left) / ((right - left) / nx) + 0.5,
                (p[6] - top) / ((bottom - top) / ny) + 0.5, rgb }'
}
is "$(cells "$tmp/hand.html" heatmap-1 2 3 | sort | tr '\n' ' ')" \
    "0 0 rgb(19,77,140) 0 2 rgb(194,217,238) 1 1 rgb(19,77,140) 1 2 rgb(194,217,238) " \
    "the heatmap has a cell per link, coloured by its utilisation"
is "$(cells "$tmp/hand.html" heatmap-1 2 3 | wc -l | tr -d ' ')" \
    "$(sql "$tmp/hand.db" "SELECT count(*) FROM link_load WHERE run_id = 1")" \
    "as many cells as link_load rows"
is "$(sql "$tmp/hand.db" "SELECT group_concat(printf('%s %.3f', name, utilization), ', ')
      FROM (SELECT * FROM link_load WHERE run_id = 1 ORDER BY link_id)")" \
    "nvl_out[gpu 0] 0.887, nvl_in[gpu 1] 0.887, copy[gpu 0] 0.261, copy[gpu 1] 0.261" \
    "whose utilisations are the ones the colours show"
# The link tables of the hand-computed run: per kind the links in use, their gigabytes
# (8655360 bytes a link), the longest busy time (8655360 B / 2.5 GB/s = 3.462144 ms on
# NVLink, / 8.5 GB/s = 1.018278 ms on a copy engine) and utilisations; then the busiest
# links, longest first (ties in link order).
rows() { sed -n "/id=\"$2\"/,/<\/table>/p" "$1" | grep '<td' |
    sed 's|</td><td[^>]*>| |g; s|<[^>]*>||g' | tr '\n' ','; }
is "$(rows "$tmp/hand.html" link-kinds-1)" \
    "nvl_out 1 0.0087 0.003462 0.887 0.887,nvl_in 1 0.0087 0.003462 0.887 0.887,\
copy 2 0.0173 0.001018 0.261 0.261," "the per-kind summary of the hand-computed run"
is "$(rows "$tmp/hand.html" link-top-1)" \
    "nvl_out[gpu 0] nvl_out 0.0087 0.003462 0.887,nvl_in[gpu 1] nvl_in 0.0087 0.003462 0.887,\
copy[gpu 0] copy 0.0087 0.001018 0.261,copy[gpu 1] copy 0.0087 0.001018 0.261," \
    "its busiest links, longest first"
is "$(rows "$html" link-top-2 | cut -d, -f1 | sed 's/\] .*/]/')" \
    "$(sql "$db" "SELECT bottleneck FROM prediction WHERE run_id = 2")" \
    "the first of the busiest links is the bottleneck the run names"
is "$(rows "$html" link-top-4 | tr ',' '\n' | grep -c .)" 10 "ten rows where more links are busy"
# Past 600 links in use a heatmap is a band of one-pixel columns: the page says so instead.
cp "$tmp/hand.db" "$tmp/many.db"
sql "$tmp/many.db" "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 598)
    INSERT INTO link_load SELECT 1, 100 + i, 'nic_out', 'nic_out[node ' || i || ' nic 0]', i, 0,
    50, 1, 1e-9, 0 FROM k"
"$REFIT" report --db "$tmp/many.db" --html "$tmp/many.html" >/dev/null
ok $? "a report of a run with 602 links in use"
is "$(count '<svg' "$tmp/many.html")|$(grep -c '^<p class="note" id="heatmap-1">No heatmap: 602 links in use, past the 600 a heatmap shows legibly; the tables above name the busiest.</p>$' "$tmp/many.html")" \
    "1|1" "only the timeline is drawn; the heatmap is left out, saying why"
is "$(rows "$tmp/many.html" link-kinds-1 | cut -d, -f4)" "nic_out 598 0.0000 0.000000 0.000 0.000" \
    "and the kinds table counts the links"
# The qwen3-30b runs above (counting needs no grid): every link that carried bytes is a cell.
is "$(cells "$html" heatmap-2 1 1 | wc -l | tr -d ' ')" \
    "$(sql "$db" "SELECT count(*) FROM link_load WHERE run_id = 2")" \
    "a larger run's heatmap has a cell per stored link"

# The comparison: one chart per scenario, bars named by strategy (by dtype or run id where
# runs share one), on a log axis; runs alone in their scenario share one chart.
gdb=$tmp/groups.db
"$REFIT" sim "$scen" --db "$gdb" --compare >/dev/null &&
    "$REFIT" sim "$scen" --db "$gdb" --strategy reshard >/dev/null &&
    "$REFIT" sim "$hand" --db "$gdb" >/dev/null &&
    "$REFIT" report --db "$gdb" --html "$tmp/groups.html" >/dev/null
ok $? "a report of two scenarios: qwen3-30b (6 runs) and tiny-llama (1 run)"
texts() { sed -n "/id=\"$1\"/,/<\/figure>/p" "$tmp/groups.html" | grep -o '<text>[^<]*</text>' |
    sed 's|<text>\(.*\)</text>|\1|' | tr '\n' '|'; }
is "$(grep -o 'id="comparison-[0-9]*"' "$tmp/groups.html" | tr '\n' ' ')" \
    'id="comparison-1" id="comparison-2" ' "a chart for the scenario and one for the single run"
is "$(texts comparison-1 | grep -o 'broadcast|reshard #2|hierarchical|hybrid|auto|reshard #6|qwen3-30b-a3b, dgx-h100 x 4 nodes, 16 to 16 GPUs|$')" \
    'broadcast|reshard #2|hierarchical|hybrid|auto|reshard #6|qwen3-30b-a3b, dgx-h100 x 4 nodes, 16 to 16 GPUs|' \
    "its bars are named by strategy, the shared one by run id, the title by model, cluster, GPUs"
is "$(texts comparison-1 | cut -d'|' -f2-7)" \
    "$(sql "$gdb" "SELECT group_concat(printf('%.3g', seconds), '|') FROM
                   (SELECT seconds FROM prediction WHERE run_id <= 6 ORDER BY run_id)")" \
    "each bar carries its predicted seconds"
# A log axis labelled at 1, 2 and 5 of each decade from 0.159 / 2.5 to 1.377 x 2.5; a
# linear one would label evenly spaced steps from zero.
is "$(texts comparison-1 | cut -d'|' -f8-12)" "0.1|0.2|0.5|1|2" "the axis has tics at 1, 2, 5"
# Log, not linear: from 0.1 to 1 is as far up the chart as from 0.2 to 2 (linear: half).
is "$(sed -n '/id="comparison-1"/,/<\/figure>/p' "$tmp/groups.html" | awk '
    match($0, /translate\([0-9.]+,[0-9.]+\)/) { split(substr($0, RSTART + 10, RLENGTH - 11), p, ","); y = p[2] }
    /^\t*<text>[0-9.]*<\/text>$/ { t = $0; gsub(/[^0-9.]/, "", t); at[t] = y }
    END { printf "%.2f", (at["0.1"] - at["1"]) / (at["0.2"] - at["2"]) }')" "1.00" \
    "the axis is logarithmic"
ok "$(texts comparison-2 | grep -q '|#7 tiny-llama reshard|one run per scenario|$'; echo $?)" \
    "the single run's bar names its run, model and strategy"

# A page of more than 8 simulated runs folds each run's links and rounds and draws the
# heatmap only for the fastest run of each scenario: qwen3-30b's hierarchical run 3 (auto,
# run 5, ties with it and comes later) and the single tiny-llama run 7.
cp "$gdb" "$tmp/fold.db"
"$REFIT" sim "$scen" --db "$tmp/fold.db" --strategy broadcast >/dev/null &&
    "$REFIT" sim "$scen" --db "$tmp/fold.db" --strategy hybrid --label x >/dev/null &&
    "$REFIT" report --db "$tmp/fold.db" --html "$tmp/fold.html" >/dev/null
ok $? "a report of 9 simulated runs"
is "$(sql "$tmp/fold.db" "SELECT group_concat(run_id, ' ') FROM (SELECT run_id FROM prediction
      WHERE run_id <= 6 AND seconds = (SELECT min(seconds) FROM prediction WHERE run_id <= 6)
      ORDER BY run_id)")" "3 5" "runs 3 and 5 are qwen3-30b's fastest"
is "$(count '<details class="more">' "$tmp/fold.html")|$(grep -A50 'id="run-3"' "$tmp/fold.html" |
      grep -c '^<details class="more" open><summary>Links and rounds (the fastest run of its scenario)</summary>$')|$(count '<details class="more" open>' "$tmp/fold.html")" \
    "7|1|2" "every run folded but run 3 and run 7, which are open"
is "$(grep -o 'figure class="plot" id="heatmap-[0-9]*"' "$tmp/fold.html" | tr '\n' ' ')" \
    'figure class="plot" id="heatmap-3" figure class="plot" id="heatmap-7" ' \
    "heatmaps only for the fastest of each scenario"
ok "$(grep -q '^<p class="note" id="heatmap-5">No heatmap: on a page of more than 8 runs only the fastest run of each scenario has one; <code>refit report --run 5</code> draws it.</p>$' \
    "$tmp/fold.html"; echo $?)" "the others say why and how to draw theirs"
# Bars of a shared strategy are told apart by label, else by run id (an empty label too).
is "$(sed -n '/id="comparison-1"/,/<\/figure>/p' "$tmp/fold.html" | grep -o '<text>[a-z]* [#x][0-9]*</text>' |
      sed 's|<text>\(.*\)</text>|\1|' | tr '\n' '|')" \
    "broadcast #1|reshard #2|hybrid #4|reshard #6|broadcast #8|hybrid x|" \
    "bars sharing a strategy are named by label or run id"
is "$(count 'id="timeline-[0-9]*"' "$tmp/fold.html")|$(count 'id="link-top-[0-9]*"' "$tmp/fold.html")" \
    "9|9" "every run keeps its timeline and link tables"
# A study's sweep: runs of one strategy and label whose scenarios differ in a field are named
# by that field and their value (here the fabric's PXN), in path order; a run whose scenario
# another has exactly (the same sweep point run twice) keeps its id as well.
sed 's/nodes = 4 }/nodes = 4, fabric = { pxn = false } }/' "$scen" >"$tmp/nopxn.lua"
vdb=$tmp/sweep.db
"$REFIT" sim "$scen" --db "$vdb" --strategy reshard --label sweep >/dev/null &&
    "$REFIT" sim "$tmp/nopxn.lua" --db "$vdb" --strategy reshard --label sweep >/dev/null &&
    "$REFIT" sim "$tmp/nopxn.lua" --db "$vdb" --strategy reshard --label sweep >/dev/null &&
    "$REFIT" sim "$scen" --db "$vdb" --strategy broadcast --label sweep >/dev/null &&
    "$REFIT" report --db "$vdb" --html "$tmp/sweep.html" >/dev/null
ok $? "a report of a PXN sweep"
is "$(sed -n '/id="comparison-1"/,/<\/figure>/p' "$tmp/sweep.html" | grep -o '<text>[a-z]*[ a-z=#0-9]*</text>' |
      sed 's|<text>\(.*\)</text>|\1|' | grep '^reshard' | tr '\n' '|')" \
    "reshard pxn=true|reshard pxn=false #2|reshard pxn=false #3|" \
    "bars of one strategy and label are named by the scenario field that differs"

# The step's phases (schema 8): runs t/step-db stores with hand-made steps get a table each
# (in the step's order, with shares) and a step column in the overview; a page of
# profile-free runs has neither.
is "$(count '<h3>Step phases</h3>' "$html")|$(count '<th>step (s)</th>' "$html")" "0|0" \
    "profile-free runs: no step table, no step column"
sdb=$tmp/step.db
"$STEP_DB" "$sdb" >/dev/null
ok $? "t/step-db stores two runs with steps"
"$REFIT" sim "$scen" --db "$sdb" >/dev/null
ok $? "and a profile-free run beside them (run 3)"
"$REFIT" report --db "$sdb" --html "$tmp/step.html" >/dev/null
ok $? "refit report of runs with steps"
steprows() { grep -A8 "id=\"step-$1\"" "$tmp/step.html" | sed -n \
    's|^<tr><td>\([a-z]*\)</td><td>\([a-z]*\)</td><td class="n">\([0-9.]*\)</td><td class="n">\([0-9.%]*\)</td>.*|\1 \2 \3 \4|p' |
    tr '\n' ','; }
is "$(steprows 1)" "all export 0.5000 14.3%,all transfer 2.0000 57.1%,all load 0.7500 21.4%,\
all finalize 0.2500 7.1%," "run 1: its phases with their share of the 3.5 s step"
is "$(steprows 2)" "bulk export 0.1250 10.0%,bulk transfer 0.5000 40.0%,bulk load 0.2500 20.0%,\
misc transfer 0.3750 30.0%,all finalize 0.2500 20.0%," "run 2: in the step's order"
ok "$(grep -q '^<p>1.2500 s: bulk, then misc: max(export, transfer, load) + first export + last load</p>$' \
    "$tmp/step.html"; echo $?)" "the step's time and composition above its table"
is "$(count '<h3>Step phases</h3>' "$tmp/step.html")|$(count 'id="step-3"' "$tmp/step.html")" \
    "2|0" "the profile-free run has no step table"
is "$(grep -o '<td class="n">[0-9.]*</td></tr>$' "$tmp/step.html" | head -2 | tr '\n' ' ')" \
    '<td class="n">3.5000</td></tr> <td class="n">1.2500</td></tr> ' \
    "the overview's step column: each run's step seconds"

# A replay of run 2 as refit-exec would store it, 10% slower than predicted in each round.
sql "$db" "INSERT INTO measurement (id, run_id, backend, world_size, iters, warmup, seconds,
           status) SELECT 1, 2, 'mpi', 4, 3, 1, seconds * 1.1, 'ok' FROM prediction
           WHERE run_id = 2;
           INSERT INTO measured_round SELECT 1, round, (finish_seconds - start_seconds) * 1.1
           FROM predicted_round WHERE run_id = 2;"
ok $? "a measurement of run 2 is stored"
"$REFIT" report --db "$db" --html "$html" >/dev/null
ok $? "refit report with a measurement"
ok "$(grep -q 'id="predicted-vs-measured"' "$html" && grep -q 'id="measured-plot"' "$html"
      echo $?)" "the page has the predicted-vs-measured plot"
is "$(count '<svg' "$html")" 12 "and one SVG more"
ok "$(grep -q '<th>measured / predicted</th><td class="n">1.100</td>' "$html"; echo $?)" \
    "run 2's table shows measured over predicted"
ok "$(grep -A 3 'id="timeline-2"' "$html" | grep -q . &&
      grep -q 'measured rounds (orange)' "$html"; echo $?)" "run 2's timeline overlays measured rounds"

"$REFIT" report --db "$db" --run 2 --run 3 --html "$tmp/two.html" >/dev/null
ok $? "refit report --run 2 --run 3"
is "$(grep -o 'class="run" id="run-[0-9]*"' "$tmp/two.html" | tr '\n' ' ')" \
    'class="run" id="run-2" class="run" id="run-3" ' "only the runs asked for"
is "$(count '<svg' "$tmp/two.html")" 6 "comparison, measured, and two plots per run"

"$REFIT" report --db "$db" --run 99 --html "$tmp/none.html" 2>"$tmp/err"
ok "$(test $? -ne 0 && grep -q 'no run 99' "$tmp/err"; echo $?)" "an unknown run is refused"
REFIT_GNUPLOT=/nonexistent/gnuplot "$REFIT" report --db "$db" --html "$tmp/none.html" \
    2>"$tmp/err"
ok "$(test $? -ne 0 && grep -q 'gnuplot-nox' "$tmp/err"; echo $?)" \
    "without gnuplot it fails and names the package"
ok "$(test ! -e "$tmp/none.html" && test ! -e "$tmp/none.html.partial"; echo $?)" \
    "and leaves no page behind"
"$REFIT" report --db "$tmp/absent.db" --html "$tmp/none.html" 2>/dev/null
ok "$(test $? -ne 0 && test ! -e "$tmp/absent.db"; echo $?)" \
    "a missing database is an error, not a new file"

# The page never replaces the database, however OUT names it, nor its WAL or journal.
ln -s "$db" "$tmp/link.db"
runs=$(sql "$db" 'SELECT count(*) FROM run')
for out in "$db" "$tmp/./report.db" "$tmp/link.db" "$db-wal" "$db-journal"; do
    "$REFIT" report --db "$db" --html "$out" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    case $out in
    *-wal | *-journal) what="$db's WAL, shared memory or journal" ;;
    *) what=$db ;;
    esac
    is "$rc $(cat "$tmp/err")" "1 refit: $out: is the database $what; name another output" \
        "--html $out is refused"
done
"$REFIT" report --db "$tmp/link.db" --html "$db" >/dev/null 2>&1
ok "$(test $? -ne 0; echo $?)" "also when --db is a symlink to the file OUT names"
is "$(sql "$db" 'SELECT count(*) FROM run')" "$runs" "the database is intact"

# OUT is replaced atomically: it keeps its mode, and a failure midway leaves it as it was
# and no temporary file beside it.
mkdir "$tmp/pages"
echo old >"$tmp/pages/p.html"
chmod 600 "$tmp/pages/p.html"
"$REFIT" report --db "$db" --run 1 --html "$tmp/pages/p.html" >/dev/null
ok $? "a report replaces an existing page"
is "$(stat -c %a "$tmp/pages/p.html")" 600 "which keeps its mode"
# shellcheck disable=SC2016 # the fake gnuplot's text is written literally
printf '#!/bin/sh\ncase "$1" in */check.gp) exec gnuplot "$1" ;; esac\necho "plot failed" >&2\nexit 1\n' \
    >"$tmp/failing-gnuplot"
chmod +x "$tmp/failing-gnuplot"
echo old >"$tmp/pages/p.html"
REFIT_GNUPLOT=$tmp/failing-gnuplot "$REFIT" report --db "$db" --html "$tmp/pages/p.html" \
    >"$tmp/out" 2>"$tmp/err"
ok "$(test $? -ne 0 && test ! -s "$tmp/out"; echo $?)" "a plot that fails midway is an error"
is "$(cat "$tmp/pages/p.html") $(find "$tmp/pages" -mindepth 1 -printf '%f ')" "old p.html " \
    "the old page stays and no temporary file is left"

# A gnuplot that hangs (here: a wrapper whose child sleeps) is killed with its children
# after REFIT_GNUPLOT_TIMEOUT seconds; the report fails and leaves no temporary folder.
# shellcheck disable=SC2016 # the fake gnuplot's text is written literally
printf '#!/bin/sh
case "$1" in */check.gp) exec gnuplot "$1" ;; esac
sleep 987
' \
    >"$tmp/hanging-gnuplot"
chmod +x "$tmp/hanging-gnuplot"
mkdir "$tmp/rtmp"
start=$(date +%s)
TMPDIR=$tmp/rtmp REFIT_GNUPLOT=$tmp/hanging-gnuplot REFIT_GNUPLOT_TIMEOUT=1 "$REFIT" report \
    --db "$db" --run 1 --html "$tmp/pages/p.html" >"$tmp/out" 2>"$tmp/err"
rc=$?
took=$(($(date +%s) - start))
is "$rc $(sed "s|$tmp/rtmp/refit-report\.[A-Za-z0-9]*/|TMP/|" "$tmp/err")" "1 refit: \
$tmp/hanging-gnuplot: no answer after 1 s on TMP/p0.gp, killed (a gnuplot that waits for \
input or hangs; \$REFIT_GNUPLOT names the binary, \$REFIT_GNUPLOT_TIMEOUT its seconds)" \
    "a hanging gnuplot is killed after the timeout, and said so"
ok "$(test "$took" -lt 20; echo $?)" "within the timeout, not the sleep's 987 s ($took s)"
is "$(find "$tmp/rtmp" -mindepth 1 | wc -l) $(pgrep -fc 'sleep 987')" "0 0" \
    "no temporary folder is left, nor the wrapper's child"
is "$(cat "$tmp/pages/p.html")" old "and the page is as it was"
# A signal while gnuplot hangs: gnuplot killed, the folder removed, refit dies of it.
TMPDIR=$tmp/rtmp REFIT_GNUPLOT=$tmp/hanging-gnuplot "$REFIT" report --db "$db" --run 1 \
    --html "$tmp/pages/p.html" >"$tmp/out" 2>"$tmp/err" &
pid=$!
# shellcheck disable=SC2317 # called through wait_until
has_plot() { [ -n "$(find "$tmp/rtmp" -name p0.gp)" ]; }
wait_until has_plot
sleep 0.2
kill -TERM $pid
wait $pid
rc=$?
is "$rc $(find "$tmp/rtmp" -mindepth 1 | wc -l) $(pgrep -fc 'sleep 987')" "143 0 0" \
    "SIGTERM while gnuplot hangs: refit dies of it, leaving no folder and no child"
grep -q '^refit: report: interrupted while gnuplot drew ' "$tmp/err"
ok $? "and says what it was doing"
REFIT_GNUPLOT_TIMEOUT=soon "$REFIT" report --db "$db" --html "$tmp/x.html" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "2 refit: REFIT_GNUPLOT_TIMEOUT=soon: expected seconds, above 0 and \
at most 86400" "a timeout that is not seconds is refused"
"$REFIT" report --db "$db" --html "$tmp/no/such/dir/p.html" >/dev/null 2>"$tmp/err"
ok "$(test $? -ne 0 && grep -q "^refit: $tmp/no/such/dir/p.html: " "$tmp/err"; echo $?)" \
    "an output in a missing folder is an error naming it"

# A label that is not UTF-8 (stored by another tool) is shown with U+FFFD: the page stays
# valid UTF-8.
sql "$db" "UPDATE run SET label = CAST(X'61FF3C62' AS TEXT) WHERE id = 1"
"$REFIT" report --db "$db" --run 1 --html "$tmp/bytes.html" >/dev/null
ok $? "a report of a label that is not UTF-8"
ok "$(iconv -f UTF-8 -t UTF-8 "$tmp/bytes.html" >/dev/null 2>&1; echo $?)" \
    "the page is valid UTF-8"
ok "$(grep -q "a$(printf '\357\277\275')&lt;b" "$tmp/bytes.html"; echo $?)" \
    "the bad byte is U+FFFD and the rest escaped"

# Rendered by a real browser: the DOM after loading holds every plot, and nothing failed.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
    for _ in 1 2 3; do
        n=$((n + 1))
        echo "ok $n # SKIP chromium is not installed (Debian package chromium)"
    done
else
    run_chromium() {
        HOME=$tmp timeout 60 "$chromium" --headless --no-sandbox --disable-gpu \
            --user-data-dir="$tmp/chromium" --enable-logging=stderr --v=0 "$@" \
            "file://$html" 2>>"$tmp/chromium.log"
    }
    run_chromium --dump-dom >"$tmp/dom.html"
    ok $? "headless Chromium loads the page"
    is "$(count '<svg' "$tmp/dom.html")" 12 "every plot is in the rendered DOM"
    run_chromium --window-size=1200,4000 --screenshot="$tmp/page.png" >/dev/null
    ok "$(test -s "$tmp/page.png" && ! grep -Eq 'CONSOLE|Uncaught|Failed to load' \
          "$tmp/chromium.log"; echo $?)" "it renders without console or load errors"
fi
done_testing
