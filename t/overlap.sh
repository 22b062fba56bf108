#!/bin/sh
# End to end: a refit that overlaps generation (a scenario's `overlap`, sim/overlap.h). With
# rolling engines each engine stalls for its own refit alone, shorter than the whole one,
# and the last has the new weights after all of them; with all engines generating, the
# refit shares their ports with generation, each engine stalls only to apply what landed,
# and its landing buffer counts in the memory fit. Both are stored beside the prediction.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/overlap
db=$tmp/overlap.db

"$REFIT" sim "$data/dsv3-rolling.lua" --db "$db" --json >"$tmp/rolling.json"
ok $? "refit sim: DeepSeek-V3 onto 8 engines of 32 H100, rolling"
is "$(sql "$db" "SELECT stall_seconds < seconds, abs(staleness_seconds - 8 * stall_seconds)
                 < 1e-9 * staleness_seconds FROM prediction WHERE run_id = 1")" "1|1" \
    "each engine stalls for its own refit, below the whole refit; the last after 8 of them"
is "$(json "$tmp/rolling.json" '$.overlap.engines') $(json "$tmp/rolling.json" \
    '$.overlap.engines_count')" "rolling 8" "--json says how the engines were refitted"
is "$(sql "$db" "SELECT overlap_refit_seconds = stall_seconds FROM prediction WHERE run_id = 1")" \
    1 "a rolling engine's refit is its stall"

"$REFIT" sim "$data/dsv3-all.lua" --db "$db" --json >"$tmp/all.json"
ok $? "refit sim: the same onto all engines while they generate at 20 GB/s a port"
is "$(sql "$db" "SELECT overlap_refit_seconds > seconds, abs(staleness_seconds -
                 overlap_refit_seconds - stall_seconds) < 1e-9, stall_seconds < 0.1 * seconds
                 FROM prediction WHERE run_id = 2")" "1|1|1" \
    "sharing the ports slows the refit; an engine stalls only to apply, a fraction of it"
# The apply: the busiest engine GPU's shard copied in at the H100's 1340 GB/s copy rate.
ok "$(awk -v s="$(json "$tmp/all.json" '$.overlap.stall_s')" \
    -v b="$(json "$tmp/all.json" '$.overlap.apply_bytes')" \
    'BEGIN { exit !(b > 4e10 && (s - b / 1340e9) ^ 2 < 1e-18) }'; echo $?)" \
    "the stall is the GPU's shard over the copy rate"
# A layer's landing buffer: the inference weights grow by the largest layer's shard.
is "$(sql "$db" "SELECT a.weights_bytes > r.weights_bytes, a.weights_bytes - r.weights_bytes
                 < r.weights_bytes / 40 FROM memory a, memory r WHERE a.run_id = 2 AND
                 r.run_id = 1 AND a.side = 'infer' AND r.side = 'infer'")" "1|1" \
    "the memory fit counts one layer's landing buffer (under a fortieth of the shard)"

# The report shows both beside each run and plots stall against refit time.
"$REFIT" report --db "$db" --html "$tmp/report.html" >/dev/null 2>&1
ok $? "refit report on the overlapped runs"
is "$(grep -c 'id="stall-plot"' "$tmp/report.html") $(grep -o 'engine stall (s)</th><td[^<]*' \
    "$tmp/report.html" | wc -l | tr -d ' ')" "1 2" \
    "the page plots stall against refit time and lists each run's stall"

# Runs without an overlap keep those columns empty.
"$REFIT" sim "$SRCDIR/t/data/update/qwen3-8b-lora.lua" --db "$db" >/dev/null
is "$(sql "$db" "SELECT stall_seconds IS NULL AND staleness_seconds IS NULL FROM prediction
                 WHERE run_id = 3")" 1 "a refit that stops the engines stores no overlap"

# Faults, at the scenario's line and field (t/lua/errors.lua): nothing stored.
for f in overlap-rolling-layer overlap-profile overlap-generation; do
    "$REFIT" sim "$SRCDIR/t/data/bad/$f.lua" --db "$tmp/bad.db" >/dev/null 2>&1
    is "$? $(test -e "$tmp/bad.db"; echo $?)" "1 1" "$f.lua is refused, nothing stored"
done
done_testing
