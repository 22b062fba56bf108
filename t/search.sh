#!/bin/sh
# End to end: `refit search` on a small real scenario. The layouts that fit are checked
# against a list computed apart (vLLM's rules and torch.chunk shards of the model's tensors,
# written out below), the stored runs against the JSON, the flags' errors to the letter.
. "${SRCDIR:-.}/t/lib.sh"
scen=$SRCDIR/t/data/search/qwen3-30b.lua
db=$tmp/search.db

"$REFIT" search "$scen" --gpus 8,12,16 --db "$db" --json >"$tmp/s.json" 2>"$tmp/err"
ok $? "refit search succeeds"
is "$(cat "$tmp/err")" "" "and says nothing on stderr when it is not a terminal"
q() { "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/s.json'), '$.layouts') ${2:-}"; }
is "$(json "$tmp/s.json" '$.enumerated') $(json "$tmp/s.json" '$.fit')" "97 72" \
    "97 layouts pass vLLM's rules with engines placed in the 8-GPU domains; 72 fit"
# Qwen3-30B-A3B: 32 heads, 4 KV heads, 48 layers, 128 experts. Per GPU count N: pp, tp and dp
# divide N (engines of tp*dp*pp GPUs), tp divides 32 and 4 divides tp or tp divides 4, ep is
# 1 (dp 1) or tp*dp (dividing 128); engines are placed domain by domain (infer.placement), so
# 12 GPUs take engines of 3 (two a domain), 6 (one a domain) and 12 (two whole domains) too. Fits: the worst GPU's shards (BF16) plus 2 x 512 MB of staging leave
# headroom in 0.2125 x 80 GB = 17 GB.
sort >"$tmp/want" <<'EOF'
12 tp1 dp1 pp12 ep1
12 tp1 dp1 pp6 ep1
12 tp1 dp2 pp3 ep2
12 tp1 dp2 pp6 ep2
12 tp1 dp4 pp3 ep4
12 tp2 dp1 pp3 ep1
12 tp2 dp1 pp3 ep2
12 tp2 dp1 pp6 ep1
12 tp2 dp1 pp6 ep2
12 tp2 dp2 pp3 ep4
12 tp4 dp1 pp3 ep1
12 tp4 dp1 pp3 ep4
12 tp1 dp1 pp4 ep1
12 tp2 dp1 pp2 ep1
12 tp2 dp1 pp2 ep2
12 tp4 dp1 pp1 ep1
12 tp4 dp1 pp1 ep4
16 tp1 dp1 pp16 ep1
16 tp1 dp1 pp4 ep1
16 tp1 dp1 pp8 ep1
16 tp1 dp16 pp1 ep16
16 tp1 dp2 pp4 ep2
16 tp1 dp2 pp8 ep2
16 tp1 dp4 pp2 ep4
16 tp1 dp4 pp4 ep4
16 tp1 dp8 pp1 ep8
16 tp1 dp8 pp2 ep8
16 tp16 dp1 pp1 ep1
16 tp16 dp1 pp1 ep16
16 tp2 dp1 pp2 ep1
16 tp2 dp1 pp2 ep2
16 tp2 dp1 pp4 ep1
16 tp2 dp1 pp4 ep2
16 tp2 dp1 pp8 ep1
16 tp2 dp1 pp8 ep2
16 tp2 dp2 pp2 ep4
16 tp2 dp2 pp4 ep4
16 tp2 dp4 pp1 ep8
16 tp2 dp4 pp2 ep8
16 tp2 dp8 pp1 ep16
16 tp4 dp1 pp1 ep1
16 tp4 dp1 pp1 ep4
16 tp4 dp1 pp2 ep1
16 tp4 dp1 pp2 ep4
16 tp4 dp1 pp4 ep1
16 tp4 dp1 pp4 ep4
16 tp4 dp2 pp1 ep8
16 tp4 dp2 pp2 ep8
16 tp4 dp4 pp1 ep16
16 tp8 dp1 pp1 ep1
16 tp8 dp1 pp1 ep8
16 tp8 dp1 pp2 ep1
16 tp8 dp1 pp2 ep8
16 tp8 dp2 pp1 ep16
8 tp1 dp1 pp4 ep1
8 tp1 dp1 pp8 ep1
8 tp1 dp2 pp4 ep2
8 tp1 dp4 pp2 ep4
8 tp1 dp8 pp1 ep8
8 tp2 dp1 pp2 ep1
8 tp2 dp1 pp2 ep2
8 tp2 dp1 pp4 ep1
8 tp2 dp1 pp4 ep2
8 tp2 dp2 pp2 ep4
8 tp2 dp4 pp1 ep8
8 tp4 dp1 pp1 ep1
8 tp4 dp1 pp1 ep4
8 tp4 dp1 pp2 ep1
8 tp4 dp1 pp2 ep4
8 tp4 dp2 pp1 ep8
8 tp8 dp1 pp1 ep1
8 tp8 dp1 pp1 ep8
EOF
q "value->>'gpus' || ' ' || (value->>'layout')" | sort >"$tmp/got"
is "$(diff "$tmp/want" "$tmp/got" && echo same)" "same" "the layouts that fit are exactly these"
row() { q "$1" "WHERE value->>'gpus' = $2 AND value->>'layout' = '$3'"; }
is "$(row "(value->>'weights_bytes') || ' ' || (value->>'kv_headroom_bytes')" 8 \
    "tp4 dp1 pp1 ep1")" "15285252096 690747904" \
    "TP4: a quarter of every sharded tensor, the norms and router whole, 0.69 GB left"
is "$(row "value->>'weights_bytes'" 8 "tp2 dp2 pp2 ep4")" 8024702976 \
    "TP2 DP2 PP2 EP4: stage 0's attention halves, a quarter of its experts"
is "$(row "value->>'weights_bytes'" 16 "tp1 dp1 pp16 ep1")" 4361057792 \
    "PP16: the first stage (3 layers and the embedding) is the worst"
is "$(row "count(*)" 8 "tp2 dp2 pp1 ep4")" 0 \
    "TP2 DP2 EP4 on 8 GPUs is absent: it needs 17.073 GB of 17"
is "$(row "count(*)" 8 "tp1 dp2 pp2 ep2")" 0 "DP2 PP2 EP2 is absent: 17.061 GB of 17"
is "$(row "count(*)" 8 "tp1 dp1 pp1 ep1")" 0 "one GPU (61 GB of weights) is absent"
is "$(q "count(*)" "WHERE value->>'engines' * value->>'engine_gpus' != value->>'gpus'")" 0 \
    "every row's engines fill its GPUs"

# Ranking: the five lowest estimates are simulated in full, stored with the label.
is "$(json "$tmp/s.json" '$.simulated') $(q "count(*)" "WHERE value->>'simulated'")" "5 5" \
    "five layouts simulated in full"
is "$(q "count(*)" "WHERE value->>'simulated' AND value->>'rank' > 5")" 0 "ranked first"
is "$("$SQLITE3" :memory: "SELECT (SELECT max(value->>'estimate_s') FROM
     json_each(readfile('$tmp/s.json'), '\$.layouts') WHERE value->>'simulated') <=
     (SELECT min(value->>'estimate_s') FROM json_each(readfile('$tmp/s.json'), '\$.layouts')
     WHERE NOT value->>'simulated')")" 1 "they are the lowest estimates"
is "$(q "count(*)" "WHERE NOT value->>'simulated' AND value->>'rank' > 6 AND value->>'estimate_s' <
     (SELECT value->>'estimate_s' FROM json_each(readfile('$tmp/s.json'), '\$.layouts') AS b
      WHERE b.value->>'rank' = value->>'rank' - 1)")" 0 "the others follow by estimate"
is "$(q "count(*)" "WHERE value->>'bound_s' > value->>'estimate_s'")" 0 \
    "no estimate is below its lower bound"
is "$(sql "$db" "SELECT count(*) FROM run JOIN prediction p ON p.run_id = run.id
     WHERE label = 'search'")" 5 "the five runs are stored with label 'search' and predictions"
sql "$db" "SELECT run.id || ' ' || infer_gpus || ' ' || printf('%.9f', p.seconds) FROM run
     JOIN prediction p ON p.run_id = run.id ORDER BY run.id" >"$tmp/db-runs"
q "(value->>'run_id') || ' ' || (value->>'gpus') || ' ' || printf('%.9f', value->>'predicted_s')" \
    "WHERE value->>'simulated' ORDER BY value->>'run_id'" >"$tmp/json-runs"
is "$(diff "$tmp/db-runs" "$tmp/json-runs" && echo same)" "same" \
    "the stored runs hold the predictions the search reports"
is "$(sql "$db" "SELECT count(DISTINCT infer_layout) FROM run")" 5 "five distinct layouts"

# The table: every fitting layout, the estimated ones marked.
"$REFIT" search "$scen" --gpus 8,12,16 --top 2 --label mine --db "$db" >"$tmp/table"
ok $? "refit search prints a table"
is "$(head -1 "$tmp/table")" \
    "qwen3-30b-a3b on dgx-h100, strategy reshard: 97 layouts enumerated, 72 fit" \
    "its first line says what was searched"
is "$(sed -n 4p "$tmp/table" | tr -s ' ')" \
    "rank layout dtype gpus engines weights GB KV GB refit s bound s bottleneck" "then the header"
is "$(grep -c -E '^ +[0-9]+  tp' "$tmp/table")" 72 "one row per layout that fits"
is "$(grep -c -E '^ +[0-9]+  tp.* ~[0-9.]+ +[0-9.]+  -$' "$tmp/table")" 70 \
    "the 70 not simulated show their estimate marked, no bottleneck"
is "$(grep -c -E '^ +[12]  tp.* [0-9.]+ +[0-9.]+  nic_out' "$tmp/table")" 2 \
    "the two simulated show their prediction and bottleneck"
is "$(tail -1 "$tmp/table")" \
    "2 simulated in full and stored in $db with label 'mine': runs 6..7" \
    "and where they are stored"
is "$(sql "$db" "SELECT count(*) FROM run WHERE label = 'mine'")" 2 "under the given label"

# Defaults: the scenario's GPU count and dtype; --top 0 stores nothing, creates no file.
"$REFIT" search "$scen" --top 0 --db "$tmp/none.db" --json >"$tmp/d.json"
ok "$(test $? -eq 0 && test ! -e "$tmp/none.db"; echo $?)" "--top 0 stores nothing"
is "$(json "$tmp/d.json" '$.enumerated') $(json "$tmp/d.json" '$.fit')" "45 37" \
    "by default the scenario's 16 GPUs"
is "$("$SQLITE3" :memory: "SELECT count(*) FROM json_each(readfile('$tmp/d.json'), '\$.layouts')
     WHERE value->>'simulated' OR value->>'gpus' != 16 OR value->>'dtype' != 'bf16'")" 0 \
    "in bf16, none simulated"
"$REFIT" search "$scen" --gpus 8 --dtype bf16,fp8 --top 0 --db "$tmp/none.db" --json \
    >"$tmp/f.json"
is "$("$SQLITE3" :memory: "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM
     json_each(readfile('$tmp/f.json'), '\$.layouts') GROUP BY value->>'dtype'
     ORDER BY value->>'dtype')")" "18 24" \
    "FP8 about halves the weights: 24 layouts of 8 GPUs fit instead of 18"
is "$("$SQLITE3" :memory: "SELECT value->>'weights_bytes' FROM json_each(readfile('$tmp/f.json'),
     '\$.layouts') WHERE value->>'dtype' = 'fp8' AND value->>'layout' = 'tp2 dp1 pp1 ep1'")" \
    15600066560 "TP2 in FP8: one byte a weight, FP32 scales per 128 x 128 block, norms in BF16"
is "$("$SQLITE3" :memory: "SELECT count(*) FROM json_each(readfile('$tmp/f.json'), '\$.layouts')
     AS f, json_each(readfile('$tmp/f.json'), '\$.layouts') AS b WHERE f.value->>'dtype' = 'fp8'
     AND b.value->>'dtype' = 'bf16' AND f.value->>'layout' = b.value->>'layout' AND
     f.value->>'weights_bytes' >= b.value->>'weights_bytes'")" 0 \
    "every layout holds fewer bytes in FP8"

# --pp keeps the pipeline sizes asked for.
"$REFIT" search "$scen" --gpus 8,16 --pp 1,4 --top 0 --json >"$tmp/pp.json"
is "$("$SQLITE3" :memory: "SELECT value->>'pp', count(*) FROM json_each(readfile('$tmp/pp.json'),
     '\$.layouts') GROUP BY value->>'pp' ORDER BY 1" | tr '\n' ' ')" "1|20 4|12 " \
    "--pp 1,4: the 20 layouts without a pipeline and the 12 of four stages that fit"

# Engines that cross NVLink domains: only where domain placement cannot place them (from GPU
# 20, 4 GPUs into a domain: engines of 6 and 12 would start off a boundary), only with
# --spanning, and marked; engines of 4 sit in the domain's second half, packed, whole.
sed 's/infer = { gpus = 16, first_gpu = 16,/infer = { gpus = 8, first_gpu = 20,/' "$scen" \
    >"$tmp/off.lua"
"$REFIT" search "$tmp/off.lua" --gpus 12 --top 0 --json >"$tmp/sp.json"
is "$(json "$tmp/sp.json" '$.enumerated') $(json "$tmp/sp.json" '$.fit')" "13 5" \
    "from GPU 20 without --spanning: the engines of 4 alone (5 fit)"
"$REFIT" search "$tmp/off.lua" --gpus 12 --spanning --top 0 --json >"$tmp/sp.json"
is "$(json "$tmp/sp.json" '$.enumerated') $(json "$tmp/sp.json" '$.fit')" "26 17" \
    "--spanning adds the packed engines of 6 and 12 GPUs (12 fit)"
is "$("$SQLITE3" :memory: "SELECT count(*) FROM json_each(readfile('$tmp/sp.json'), '\$.layouts')
     WHERE (value->>'spans') != (value->>'engine_gpus' != 4)")" 0 \
    "marked exactly where an engine crosses a domain"
"$REFIT" search "$tmp/off.lua" --gpus 12 --spanning --top 0 >"$tmp/sp.txt"
is "$(grep -c '(spans domains)$' "$tmp/sp.txt")" 12 "the table marks them"

# More GPUs than the scenario's cluster holds: it grows, idle nodes carry nothing.
"$REFIT" search "$scen" --gpus 32 --top 1 --db "$tmp/grow.db" --json >"$tmp/g.json"
is "$("$SQLITE3" :memory: "SELECT group_concat(DISTINCT value->>'nodes')
     FROM json_each(readfile('$tmp/g.json'), '\$.layouts')")" 6 \
    "32 GPUs from GPU 16 need 6 nodes (the scenario has 4)"
is "$(sql "$tmp/grow.db" "SELECT cluster_nodes || ' ' || infer_gpus FROM run")" "6 32" \
    "the stored run has them"

# auto: each layout is estimated by auto's screen (its uniform reshard and hierarchical
# candidates, PXN on and off), the same plans and estimates auto itself records.
"$REFIT" search "$scen" --gpus 8 --strategy auto --top 1 --db "$tmp/auto.db" --json \
    >"$tmp/a.json"
ok $? "refit search --strategy auto succeeds"
is "$("$SQLITE3" :memory: "SELECT value->>'strategy' FROM json_each(readfile('$tmp/a.json'),
     '\$.layouts') WHERE value->>'rank' = 1")" auto "the best is simulated with all of auto"
sed 's/infer = { gpus = 16, first_gpu = 16, tp = 2,/infer = { gpus = 8, first_gpu = 16, tp = 4,/' \
    "$scen" >"$tmp/tp4.lua"
"$REFIT" sim "$tmp/tp4.lua" --strategy auto --db "$tmp/auto.db" --json >"$tmp/tp4.json"
uniform="(c.value->>'candidate' LIKE 'pxn %, balanced sources: %' AND NOT
    (c.value->>'candidate' LIKE '%=hierarchical%' OR c.value->>'candidate' LIKE '%=broadcast%'
     OR c.value->>'candidate' LIKE '%=mixed%')) OR (c.value->>'candidate' LIKE
    'pxn %, balanced sources, ring: %' AND NOT (c.value->>'candidate' LIKE '%=reshard%' OR
     c.value->>'candidate' LIKE '%=broadcast%' OR c.value->>'candidate' LIKE '%=mixed%'))"
is "$("$SQLITE3" :memory: "SELECT value->>'estimate_s' FROM json_each(readfile('$tmp/a.json'),
     '\$.layouts') WHERE value->>'layout' = 'tp4 dp1 pp1 ep1'")" \
    "$("$SQLITE3" :memory: "SELECT min(c.value->>'estimate_s') FROM
     json_each(readfile('$tmp/tp4.json'), '\$.auto_candidates') AS c WHERE $uniform")" \
    "TP4's estimate is the best of auto's own uniform candidates for it"

# Errors.
err() { "$REFIT" search "$scen" "$@" --db "$tmp/err.db" >/dev/null 2>"$tmp/err"; echo $?; }
is "$(err --gpus 0) $(cat "$tmp/err")" "2 refit: --gpus: '0' is not a GPU count (an integer \
from 1 to 1048576) (see refit search --help)" "--gpus 0 is refused"
is "$(err --gpus 8,x) $(cat "$tmp/err")" "2 refit: --gpus: 'x' is not a GPU count (an integer \
from 1 to 1048576) (see refit search --help)" "--gpus with a word is refused"
is "$(err --gpus 8,8) $(cat "$tmp/err")" \
    "2 refit: --gpus: 8 is listed twice (see refit search --help)" "a count twice is refused"
is "$(err --gpus 8,) $(cat "$tmp/err")" "2 refit: --gpus: expected integers separated by \
commas, got '8,' (see refit search --help)" "a trailing comma is refused"
is "$(err --pp 1,-2) $(cat "$tmp/err")" "2 refit: --pp: '-2' is not a pipeline size (an integer \
from 1 to 1048576) (see refit search --help)" "--pp -2 is refused"
is "$(err --dtype fp4) $(cat "$tmp/err")" "2 refit: --dtype: 'fp4' is not an inference dtype \
(bf16 or fp8) (see refit search --help)" "--dtype fp4 is refused"
is "$(err --dtype fp8,fp8) $(cat "$tmp/err")" \
    "2 refit: --dtype: fp8 is listed twice (see refit search --help)" "a dtype twice is refused"
is "$(err --top -1) $(cat "$tmp/err")" "2 refit: --top: '-1' is not a count of layouts (an \
integer from 0 to 1048576) (see refit search --help)" "--top -1 is refused"
is "$(err --top 2.5) $(cat "$tmp/err")" "2 refit: --top: '2.5' is not a count of layouts (an \
integer from 0 to 1048576) (see refit search --help)" "--top 2.5 is refused"
is "$(err --strategy magic) $(cat "$tmp/err")" "2 refit: --strategy: unknown strategy 'magic' \
(broadcast, reshard, hierarchical, hybrid, auto, p2p (under a profile)) (see refit search \
--help)" \
    "an unknown strategy is refused"
is "$(err --gpus 1,3) $(cat "$tmp/err")" "1 refit: $scen: no layout fits in the GPUs' memory \
(3 enumerated; more GPUs, fp8, or a larger infer.gpu_memory_utilization)" \
    "a search where nothing fits says so"
ok "$(test ! -e "$tmp/err.db"; echo $?)" "no failed search creates a database"
# The training side is the scenario's, and must fit.
sed 's/gpus = 16, first_gpu = 0, tp = 2, pp = 2, ep = 4/gpus = 2, first_gpu = 0, ep = 2/' \
    "$scen" >"$tmp/train.lua"
is "$("$REFIT" search "$tmp/train.lua" --gpus 8 --db "$tmp/err.db" 2>&1 >/dev/null)" \
    "refit: $tmp/train.lua:7: train: the layout does not fit: GPU 0 (stage 0) needs 248.4 GB of \
80.0 (weights 32.1, grads 32.1, optimizer 183.2, staging 1.0; activations not counted); shard \
further (more tp, ep or pp, or more GPUs), or set allow_overcommit = true for a what-if" \
    "a training side that does not fit is refused"

# Progress on a terminal: k/N and an ETA.
if command -v script >/dev/null 2>&1; then
    script -qec "'$REFIT' search '$scen' --gpus 8 --top 1 --db '$tmp/tty.db' >/dev/null" \
        /dev/null | tr '\r' '\n' >"$tmp/tty"
    is "$(grep -c -E '^refit search: estimated 18/18 layouts that fit, took [0-9]+s' "$tmp/tty")" \
        1 "a terminal sees the estimates counted to the end"
    is "$(grep -c -E '^refit search: simulated 1/1: tp.* on 8 GPUs, [0-9.]+ s \(run 1\), took' \
        "$tmp/tty")" 1 "and each full simulation"
else
    echo "ok $((n + 1)) # SKIP no script(1) for a terminal"
    echo "ok $((n + 2)) # SKIP no script(1) for a terminal"
    n=$((n + 2))
fi

# A study's refit.search and refit.estimate.
"$REFIT" run "$SRCDIR/t/data/study/search.lua" --db "$tmp/study.db" >"$tmp/study" 2>"$tmp/err"
ok $? "a study runs refit.search"
is "$(head -1 "$tmp/study")" "search: 71 enumerated, 55 fit, 2 simulated" "its figures"
is "$(sql "$tmp/study.db" "SELECT count(*) FROM run WHERE label = 'study-search'")" 2 \
    "the study's two runs are stored with its label"
is "$(grep -c '^estimate: fits true, weights 15285252096, bound ' "$tmp/study")" 1 \
    "refit.estimate gives the figures of one layout"
# Under --max-memory, a layout whose plan is estimated above it is left out: listed last with
# its estimate, neither estimated nor simulated; the others are searched as before.
"$REFIT" search "$scen" --gpus 8 --db "$tmp/mem.db" --json --max-memory 1M >"$tmp/m.json"
ok $? "refit search --max-memory 1M answers"
mq() { "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/m.json'), '$.layouts')"; }
is "$(mq "group_concat(json_extract(value, '$.layout') || ':' ||
          json_extract(value, '$.rank'), ' ')
          FILTER (WHERE json_extract(value, '$.left_out'))")" \
    "tp4 dp1 pp1 ep1:17 tp8 dp1 pp1 ep1:18" "the two layouts whose plans need more, ranked last"
is "$(mq "count(*) FILTER (WHERE json_extract(value, '$.left_out') !=
          (json_extract(value, '$.plan_memory_bytes') > 1000000))")" 0 \
    "left out exactly where the plan's estimate is above the limit"
is "$(mq "count(*) FILTER (WHERE json_extract(value, '$.left_out') AND
          (json_extract(value, '$.simulated') OR json_extract(value, '$.estimate_s') IS NOT NULL))")" \
    0 "and neither estimated nor simulated"
is "$(json "$tmp/m.json" '$.simulated') $(sql "$tmp/mem.db" "SELECT count(*) FROM run")" "5 5" \
    "the top five of the others are simulated and stored"
"$REFIT" search "$scen" --gpus 8 --db "$tmp/mem.db" --top 0 --max-memory 1M >"$tmp/m.txt"
is "$(grep -c 'left out: its plan needs an estimated 0.001[0-9]* GB$' "$tmp/m.txt")" 2 \
    "the table says so on each row"
done_testing
