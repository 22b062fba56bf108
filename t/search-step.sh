#!/bin/sh
# End to end: `refit search` under a framework profile ranks the layouts by the whole step
# (export, wire, load, finalize: sim/step.c), the time the user waits for, not by the wire.
# Qwen3-32B broadcast the way NeMo RL runs it, from 16 training GPUs (TP4 PP2).
. "${SRCDIR:-.}/t/lib.sh"
scen=$SRCDIR/t/data/search/qwen3-32b-nemo-rl.lua
db=$tmp/search.db

"$REFIT" search "$scen" --gpus 8,16 --top 3 --db "$db" --json >"$tmp/s.json" 2>"$tmp/err"
ok $? "refit search under the nemo-rl profile succeeds"
is "$(cat "$tmp/err")" "" "and says nothing on stderr"
q() { "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/s.json'), '\$.layouts') ${2:-}"; }
is "$(json "$tmp/s.json" '$.ranked_by') $(json "$tmp/s.json" '$.framework')" "step nemo-rl" \
    "the JSON says the rows rank by the step, under nemo-rl"
is "$(json "$tmp/s.json" '$.fit') $(json "$tmp/s.json" '$.simulated')" "25 3" \
    "25 layouts fit, the three best simulated in full"
is "$(q "count(*)" "WHERE value->>'estimate_step_s' IS NULL")" 0 "every row has a step estimate"
# A step is at least its wire: the export's TP and PP all-gathers and the loads come on top.
is "$(q "count(*)" "WHERE value->>'estimate_step_s' <= value->>'estimate_s'")" 0 \
    "every step estimate is above its wire estimate"

# The order: the simulated rows first by their step, the others by the step's estimate;
# each row's step is at least the one before it in its group.
is "$(q "count(*)" "WHERE value->>'simulated' AND value->>'rank' > 3")" 0 "simulated first"
is "$(q "count(*)" "AS a WHERE value->>'simulated' AND value->>'rank' > 1 AND value->>'step_s' <
     (SELECT b.value->>'step_s' FROM json_each(readfile('$tmp/s.json'), '\$.layouts') AS b
      WHERE b.value->>'rank' = a.value->>'rank' - 1)")" 0 "the simulated rows follow by step"
is "$(q "count(*)" "AS a WHERE NOT value->>'simulated' AND value->>'rank' > 4 AND
     value->>'estimate_step_s' <
     (SELECT b.value->>'estimate_step_s' FROM json_each(readfile('$tmp/s.json'), '\$.layouts')
      AS b WHERE b.value->>'rank' = a.value->>'rank' - 1)")" 0 \
    "the estimated rows follow by the step's estimate"
is "$("$SQLITE3" :memory: "SELECT (SELECT max(value->>'estimate_step_s') FROM
     json_each(readfile('$tmp/s.json'), '\$.layouts') WHERE value->>'simulated') <=
     (SELECT min(value->>'estimate_step_s') FROM json_each(readfile('$tmp/s.json'), '\$.layouts')
     WHERE NOT value->>'simulated')")" 1 "the simulated ones are the lowest step estimates"
# Where it matters: by the wire alone every 8-GPU layout is ahead of every 16-GPU one (the
# broadcast from the same trainers reaches 8 receivers in 0.1710 s, 16 in 0.1764 s), but an
# engine GPU of TP8 loads a quarter of the shard a TP2 one does (the copy of a dense 32B
# model's shard outlasts the loader's host calls), so TP8 on 16 GPUs ranks ahead of the TP2
# and TP1 layouts on 8 GPUs; the wire would have ranked it behind all of them.
is "$(q "value->>'layout' || ' ' || (value->>'gpus')" "WHERE value->>'rank' = 1")" \
    "tp8 dp1 pp1 ep1 8" "the best step is TP8 on 8 GPUs"
is "$(q "value->>'layout' || ' ' || (value->>'gpus')" "WHERE value->>'rank' = 4")" \
    "tp8 dp1 pp1 ep1 16" "fourth: TP8 on 16 GPUs"
is "$(q "count(*)" "WHERE value->>'estimate_s' < (SELECT b.value->>'estimate_s' FROM
     json_each(readfile('$tmp/s.json'), '\$.layouts') AS b WHERE b.value->>'rank' = 4) AND
     value->>'rank' > 4 AND value->>'gpus' = 8")" 7 \
    "7 8-GPU rows behind it have a lower wire estimate (TP2 and TP1)"
is "$(q "group_concat(DISTINCT substr(value->>'layout', 1, 3))" "WHERE value->>'rank' > 4 AND
     value->>'gpus' = 8")" "tp2,tp1" "they are the TP2 and TP1 layouts, whose GPUs load more"

# The stored runs hold the steps the search reports: prediction.seconds is the step under a
# profile, step_seconds the same, and the wire is the transfer phase's own simulation.
sql "$db" "SELECT run.id || ' ' || printf('%.9f', p.step_seconds) || ' ' ||
     printf('%.9f', p.seconds) FROM run JOIN prediction p ON p.run_id = run.id ORDER BY run.id" \
    >"$tmp/db-runs"
q "(value->>'run_id') || ' ' || printf('%.9f', value->>'step_s') || ' ' ||
   printf('%.9f', value->>'predicted_s')" "WHERE value->>'simulated' ORDER BY value->>'run_id'" \
    >"$tmp/json-runs"
is "$(diff "$tmp/db-runs" "$tmp/json-runs" && echo same)" "same" \
    "the stored runs' step_seconds are the search's step_s"

# The best row as `refit sim` predicts it alone: the same step to the nanosecond.
sed 's/infer = { gpus = 16, first_gpu = 16, tp = 2 }/infer = { gpus = 8, first_gpu = 16, tp = 8 }/' \
    "$scen" >"$tmp/best.lua"
is "$(grep -c 'gpus = 8, first_gpu = 16, tp = 8' "$tmp/best.lua")" 1 \
    "the best layout's scenario is written"
"$REFIT" sim "$tmp/best.lua" --db "$tmp/sim.db" >/dev/null 2>"$tmp/err"
ok $? "refit sim of the best layout succeeds"
is "$(sql "$tmp/sim.db" "SELECT printf('%.9f', step_seconds) FROM prediction")" \
    "$(q "printf('%.9f', value->>'step_s')" "WHERE value->>'rank' = 1")" \
    "its prediction.step_seconds is the best row's step"

# The table: the ranking key in its first line, the step column and its footnote.
"$REFIT" search "$scen" --gpus 8,16 --top 1 --db "$db" >"$tmp/table"
ok $? "refit search prints a table"
is "$(head -1 "$tmp/table")" \
    "qwen3-32b on dgx-h100, strategy broadcast: 25 layouts enumerated, 25 fit; framework nemo-rl: ranked by the step (step s)" \
    "its first line says the rows rank by the step"
is "$(sed -n 4p "$tmp/table" | tr -s ' ')" \
    "rank layout dtype gpus engines weights GB KV GB refit s bound s step s bottleneck" \
    "its header has the step column"
is "$(grep -c '^refit s: the wire; step s: export, wire, load and finalize as nemo-rl runs them' \
    "$tmp/table")" 1 "a footnote says what the two figures are"
is "$(awk '$1 == 2 { print $(NF - 1) }' "$tmp/table" | cut -c1)" "~" \
    "an estimated row's step is marked as an estimate"

# A study's refit.search and refit.estimate give the same figures.
"$REFIT" run "$SRCDIR/t/data/study/search-step.lua" --db "$tmp/study.db" >"$tmp/study" 2>"$tmp/err"
ok $? "a study runs refit.search and refit.estimate under the profile"
is "$(head -1 "$tmp/study")" \
    "$(q "printf('best: %s on %d GPUs, step %.9f s, wire %.9f s, estimate %.9f s', value->>'layout',
     value->>'gpus', value->>'step_s', value->>'wire_s', value->>'estimate_step_s')" \
     "WHERE value->>'rank' = 1")" "refit.search's best row is the command's"
is "$(sed -n 2p "$tmp/study")" \
    "$(q "printf('estimate: step %.9f s, wire %.9f s', value->>'estimate_step_s',
     value->>'estimate_s')" "WHERE value->>'rank' = 1")" \
    "refit.estimate of that layout alone is the search's estimate of it"

done_testing
