#!/bin/sh
# End to end: `refit sim` on a small real scenario; predictions checked in the JSON output and
# in the database.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/sim.db
scen=$SRCDIR/t/data/sim/qwen3-30b.lua

"$REFIT" sim "$scen" --db "$db" --compare --json >"$tmp/cmp.json"
ok $? "refit sim --compare succeeds"
q() { "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/cmp.json')) ${2:-}"; }
is "$(q "group_concat(value->>'strategy')")" "broadcast,reshard,hierarchical,hybrid,auto" \
    "every strategy side by side"
is "$(q "count(*)" "WHERE value->>'predicted_s' < value->>'lower_bound_s'")" 0 \
    "no prediction is below the lower bound"
is "$(q "count(DISTINCT value->>'lower_bound_s')")" 1 "the bound does not depend on the strategy"
auto=$(q "value->>'predicted_s'" "WHERE value->>'strategy' = 'auto'")
best=$(q "min(value->>'predicted_s')" "WHERE value->>'strategy' != 'auto'")
is "$("$SQLITE3" :memory: "SELECT $auto <= $best")" 1 \
    "auto predicts no slower than the best other strategy ($auto <= $best)"
# auto's record: its candidates, each with a bound that no prediction beats.
cands() { "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/cmp.json')) AS r,
    json_each(r.value->'auto_candidates') AS c WHERE r.value->>'strategy' = 'auto' ${2:-}"; }
ok "$(test "$(cands "count(*)")" -ge 8; echo $?)" \
    "auto records its candidates ($(cands "count(*)") with PXN on and off)"
is "$(cands "count(*)" "AND c.value->>'predicted_s' < c.value->>'bound_s'")" 0 \
    "no candidate's prediction is below its bound"
is "$(cands "min(c.value->>'predicted_s')")" "$auto" "auto keeps its fastest prediction"
# Threads only run independent candidates at once: one thread finds the same plan.
REFIT_THREADS=1 "$REFIT" sim "$scen" --strategy auto --db "$tmp/one.db" --json >"$tmp/one.json"
is "$("$SQLITE3" :memory: "SELECT j->>'predicted_s' || ' ' || (j->>'auto_choice')
     FROM (SELECT readfile('$tmp/one.json') AS j)")" \
    "$(q "(value->>'predicted_s') || ' ' || (value->>'auto_choice')" \
         "WHERE value->>'strategy' = 'auto'")" "one thread or two, auto chooses the same"

rs=$(q "value->>'fabric_bytes'" "WHERE value->>'strategy' = 'reshard'")
hi=$(q "value->>'fabric_bytes'" "WHERE value->>'strategy' = 'hierarchical'")
# Each box crosses the fabric once per destination NVLink domain (8-GPU nodes), whatever the
# number of replicas there: the distinct (box, domain) pairs of the reshard run.
is "$hi" "$(sql "$db" "SELECT sum(bytes) FROM (SELECT DISTINCT tensor_id, off0, off1, off2,
                       off3, len0, len1, len2, len3, dst_gpu / 8, bytes FROM transfer_each
                       WHERE run_id = 2)")" \
    "hierarchical crosses the fabric once per box and domain, not per replica"
ok "$(test "$hi" -lt "$rs"; echo $?)" "so less than reshard ($hi < $rs)"
is "$(q "value->>'payload_bytes'" "WHERE value->>'strategy' = 'hierarchical'")" \
    "$(q "value->>'payload_bytes'" "WHERE value->>'strategy' = 'reshard'")" \
    "and still delivers the same payload"

is "$(sql "$db" "SELECT count(*) FROM prediction")" 5 "one prediction per run"
is "$(sql "$db" "SELECT count(*) FROM link_load WHERE bytes = 0 AND busy_seconds = 0")" 0 \
    "links that carried nothing have no link_load row"
is "$(sql "$db" "SELECT sum(bytes) FROM link_load WHERE run_id = 2 AND kind = 'nic_out'")" \
    "$rs" "fabric bytes are the bytes through the NICs"
is "$(sql "$db" "SELECT count(*) FROM predicted_round WHERE run_id = 2")" \
    "$(sql "$db" "SELECT rounds FROM run WHERE id = 2")" "a time for every round"
is "$(sql "$db" "SELECT count(*) FROM predicted_round r JOIN prediction p ON p.run_id = r.run_id
                 WHERE r.finish_seconds > p.seconds * (1 + 1e-9)")" 0 \
    "no round ends after the predicted time"
b=$(sql "$db" "SELECT bottleneck FROM prediction WHERE run_id = 2")
# The bottleneck is the link busy longest; of those busy as long (to 1e-9), the most used
# (utilization: bytes per GB/s over the run), the lowest link id of a tie. On reshard (run 2)
# it is not the link with the most bytes per GB/s (a NIC busy 0.636 s, named before).
busiest="SELECT link_id FROM link_load l WHERE l.run_id = p.run_id AND l.busy_seconds >=
         (SELECT max(busy_seconds) FROM link_load m WHERE m.run_id = p.run_id) * (1 - 1e-9)
         ORDER BY utilization DESC, link_id LIMIT 1"
is "$(sql "$db" "SELECT name FROM link_load WHERE run_id = 2 ORDER BY busy_seconds DESC, link_id
                 LIMIT 1")" "$b" "the bottleneck is the link busy longest ($b)"
is "$(sql "$db" "SELECT count(*) FROM prediction p WHERE bottleneck_link_id IS NOT ($busiest)")" \
    0 "so in each of the 5 runs"
is "$(sql "$db" "SELECT count(*) FROM link_load l JOIN prediction p ON p.run_id = l.run_id
                 AND l.link_id = p.bottleneck_link_id WHERE l.busy_seconds < (SELECT
                 max(busy_seconds) FROM link_load m WHERE m.run_id = p.run_id) * (1 - 1e-9)")" \
    0 "no run names a bottleneck busy for less than the busiest link"

"$REFIT" sim "$scen" --db "$db" --strategy reshard >"$tmp/table" 2>&1
ok $? "the table form works"
is "$(sed -n 2p "$tmp/table" | tr -s ' ')" \
    "$(q "printf('6 reshard %.3f %.3f %.1f %.1f %.1f %d %s', value->>'predicted_s',
          value->>'lower_bound_s', value->>'payload_bytes' / 1e9, value->>'fabric_bytes' / 1e9,
          value->>'nvlink_bytes' / 1e9, value->>'rounds', value->>'bottleneck')" \
         "WHERE value->>'strategy' = 'reshard'")" \
    "and its row holds the run id and the figures of the JSON"
is "$(tail -n 1 "$tmp/table")" "stored in $db as run 6" "the table names the run a replay needs"
"$REFIT" sim "$scen" --db "$db" --compare >"$tmp/table"
is "$(awk 'NR > 1 && $2 ~ /^(broadcast|reshard|hierarchical|hybrid|auto)$/ { print $1 $2 }' \
    "$tmp/table" | tr '\n' ' ')|$(tail -n 1 "$tmp/table")" \
    "7broadcast 8reshard 9hierarchical 10hybrid 11auto |stored in $db as runs 7..11" \
    "--compare: each strategy's row names its run, and the last line all of them"
is "$(sql "$db" "SELECT group_concat(id || strategy, ' ') FROM run WHERE id >= 7")" \
    "7broadcast 8reshard 9hierarchical 10hybrid 11auto" "as the database holds them"

# A prediction computed by hand: tiny-llama (t/data/exec/tiny-llama.lua) from one "GPU" to
# another on the localhost preset, in one round (64 MB of staging). Its 39 tensors (4 layers
# of q, k, v, o, gate, up, down and 2 norms; the embedding, the LM head and the final norm)
# hold 2 x (2 x 4096 x 256 + 4 x (2 x 256 x 256 + 2 x 256 x 64 + 3 x 256 x 512 + 2 x 256)
# + 256) = 8655360 bytes of BF16, merged into one message over NVLink at 2.5 GB/s (the copy
# engines' 8.5 GB/s do not limit it). The prediction is that time, 3.462144 ms, plus one
# message latency (1 us), one tensor overhead per tensor (39 x 10 us) and one round's
# bucket overhead (50 us): 3.903144 ms. The bound is the NVLink time less twice the default
# tolerance (1e-3): 3.462144 x 0.998 = 3.455219712 ms.
hand=$SRCDIR/t/data/sim/tiny-hand.lua
"$REFIT" sim "$hand" --db "$tmp/hand.db" --json >"$tmp/hand.json"
ok $? "refit sim on the hand-computed scenario"
is "$("$SQLITE3" :memory: "SELECT printf('%d %d %d %d %.9f %.12f', j->>'payload_bytes',
      j->>'transfers', j->>'messages', j->>'rounds', j->>'predicted_s', j->>'lower_bound_s')
      FROM (SELECT readfile('$tmp/hand.json') AS j)")" \
    "8655360 39 1 1 0.003903144 0.003455219712" \
    "8655360 bytes in 39 tensors, one message, one round: 3.903144 ms, bound 3.455219712 ms"
is "$(sql "$tmp/hand.db" "SELECT printf('%.9f %.12f %d %d %s', seconds, lower_bound_seconds,
      nvlink_bytes, fabric_bytes, bottleneck) FROM prediction WHERE run_id = 1")" \
    "$("$SQLITE3" :memory: "SELECT printf('%.9f %.12f %d %d %s', j->>'predicted_s',
       j->>'lower_bound_s', j->>'nvlink_bytes', j->>'fabric_bytes', j->>'bottleneck')
       FROM (SELECT readfile('$tmp/hand.json') AS j)")" \
    "the stored prediction row is the JSON's"
is "$(sql "$tmp/hand.db" "SELECT group_concat(printf('%s %d %.9f', name, bytes, busy_seconds),
      ', ') FROM (SELECT * FROM link_load WHERE run_id = 1 ORDER BY name)")" \
    "copy[gpu 0] 8655360 0.001018278, copy[gpu 1] 8655360 0.001018278, nvl_in[gpu 1] 8655360 0.003462144, nvl_out[gpu 0] 8655360 0.003462144" \
    "link_load: every byte through each copy engine at 8.5 GB/s and each NVLink port at 2.5 GB/s"

# The localhost preset plans a run for the executor's host backend (its notional 2 GB "GPUs"
# hold no 30 B model: a what-if).
sed 's/^return {/return { allow_overcommit = true,/; s/system = "dgx-h100", nodes = 4/system = "localhost"/; s/gpus = 16, first_gpu = 16/gpus = 4, first_gpu = 0/; s/gpus = 16, first_gpu = 0, tp = 2, pp = 2, ep = 4/gpus = 4, first_gpu = 0, tp = 2, pp = 2, ep = 1/' \
    "$scen" >"$tmp/local.lua"
"$REFIT" sim "$tmp/local.lua" --db "$db" --json >"$tmp/local.json"
ok $? "a colocated run on the localhost preset simulates"
is "$(json "$tmp/local.json" '$.fabric_bytes')" 0 "without NICs nothing crosses a fabric"

# ---- hierarchical leaders (leaders helper's block) ----
# GB200 in miniature: 16 trainers in NVL72 domain 0, 16 TP2 replicas in domain 1. Every box
# goes to 16 GPUs of the domain; its leader is the least-loaded NIC's, so all 32 inference
# NICs share the fabric bytes (when the domain's lowest GPU led every box, 2 NICs took them
# all and hierarchical predicted 1.31 s, slower than reshard's 1.31 s).
sed 's/system = "dgx-h100", nodes = 4/system = "gb200-nvl72", nodes = 54/;
     s/gpus = 16, first_gpu = 16, tp = 2/gpus = 32, first_gpu = 72, tp = 2/' \
    "$scen" >"$tmp/nvl72.lua"
"$REFIT" sim "$tmp/nvl72.lua" --db "$tmp/nvl72.db" --strategy hierarchical --json \
    >"$tmp/nvl72.json"
ok $? "hierarchical on an NVL72 domain of 16 replicas simulates"
"$REFIT" sim "$tmp/nvl72.lua" --db "$tmp/nvl72.db" --strategy reshard --json >"$tmp/nvl72r.json"
hp=$(json "$tmp/nvl72.json" '$.predicted_s')
is "$(sql "$tmp/nvl72.db" "SELECT count(*) || ' ' || (max(bytes) * count(*) <= 1.25 * sum(bytes))
      FROM link_load WHERE run_id = 1 AND kind = 'nic_in'")" "32 1" \
    "hierarchical leaders spread the fabric bytes over all 32 inference NICs (max/mean <= 1.25)"
is "$("$SQLITE3" :memory: "SELECT $hp < 0.5")" 1 "so it predicts $hp s (1.31 s with one leader)"
is "$("$SQLITE3" :memory: "SELECT $hp < $(json "$tmp/nvl72r.json" '$.predicted_s')")" 1 \
    "faster than reshard, as M2N measured where replicas share a domain"
is "$("$SQLITE3" :memory: "SELECT $hp >= $(json "$tmp/nvl72.json" '$.lower_bound_s')")" 1 \
    "and not below the lower bound"
# ---- end hierarchical leaders block ----
# ---- the simulator's tolerance and threads (calibration helper's block) ----
# The command reads REFIT_SIM_TOLERANCE and REFIT_THREADS and range-checks them; the library
# is handed the values. A bad value is one line naming the variable, and no database.
for v in 0.5 0 1e-13 0.0100001 abc 1e-3x nan inf " "; do
    REFIT_SIM_TOLERANCE=$v "$REFIT" sim "$scen" --db "$tmp/bad.db" >/dev/null 2>"$tmp/err"
    is "$? $(cat "$tmp/err") $(test -e "$tmp/bad.db"; echo $?)" \
        "1 refit: REFIT_SIM_TOLERANCE=$v: must be a number from 1e-12 to 0.01 1" \
        "REFIT_SIM_TOLERANCE='$v' is refused"
done
for v in 0 257 -1 2x 1.5; do
    REFIT_THREADS=$v "$REFIT" sim "$scen" --strategy auto --db "$tmp/bad.db" >/dev/null \
        2>"$tmp/err"
    is "$? $(cat "$tmp/err") $(test -e "$tmp/bad.db"; echo $?)" \
        "1 refit: REFIT_THREADS=$v: must be an integer from 1 to 256 1" \
        "REFIT_THREADS='$v' is refused"
done
REFIT_SIM_TOLERANCE=0.5 "$REFIT" plan "$scen" --db "$tmp/bad.db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: REFIT_SIM_TOLERANCE=0.5: must be a number from 1e-12 to 0.01" \
    "refit plan checks it too (auto simulates)"
REFIT_SIM_TOLERANCE='' REFIT_THREADS='' "$REFIT" sim "$scen" --strategy reshard --db "$tmp/e.db" \
    --json >"$tmp/e.json"
is "$? $(json "$tmp/e.json" '$.predicted_s')" \
    "0 $(q "value->>'predicted_s'" "WHERE value->>'strategy' = 'reshard'")" \
    "empty values are the defaults"
# At the top of the range flows finish up to 1% early; the bounds carry twice that margin,
# so no prediction, of a strategy or of an auto candidate, falls below them.
REFIT_SIM_TOLERANCE=0.01 "$REFIT" sim "$scen" --db "$tmp/top.db" --compare --json \
    >"$tmp/top.json"
ok $? "refit sim --compare at REFIT_SIM_TOLERANCE=0.01"
qt() { "$SQLITE3" :memory: "SELECT $1 FROM json_each(readfile('$tmp/top.json')) ${2:-}"; }
is "$(qt "count(*)" "WHERE value->>'predicted_s' < value->>'lower_bound_s'")" 0 \
    "no prediction is below the lower bound"
is "$("$SQLITE3" :memory: "SELECT count(*) FROM json_each(readfile('$tmp/top.json')) AS r,
      json_each(r.value->'auto_candidates') AS c
      WHERE c.value->>'predicted_s' < c.value->>'bound_s'")" 0 \
    "no auto candidate's prediction is below its bound"
is "$(qt "count(*)" "WHERE abs(value->>'predicted_s' -
      (SELECT value->>'predicted_s' FROM json_each(readfile('$tmp/cmp.json')) AS d
       WHERE d.value->>'strategy' = json_each.value->>'strategy'))
      > 0.02 * (value->>'predicted_s')")" 0 "and each prediction within 2% of the default's"
# ---- end tolerance block ----
# Nothing on stdout unless the command succeeds: no table header before an error.
sed 's/tp = 2 }/tp = 3 }/' "$scen" >"$tmp/bad.lua"
"$REFIT" sim "$tmp/bad.lua" --db "$tmp/bad.db" >"$tmp/out" 2>"$tmp/err"
ok "$(test $? -eq 1; echo $?)" "a bad scenario fails refit sim"
is "$(cat "$tmp/out")" "" "and prints no table header"
ok "$(test ! -e "$tmp/bad.db"; echo $?)" "and creates no database"
is "$(wc -l <"$tmp/err" | tr -d ' ')" 1 "its error is one line"
mkdir "$tmp/models"
ln -s "$REFIT_MODELS/lib" "$REFIT_MODELS/clusters" "$REFIT_MODELS/qwen3-8b.lua" "$tmp/models/"
printf 'return {\n' >"$tmp/models/zz-broken.lua"
REFIT_MODELS=$tmp/models "$REFIT" models >"$tmp/out" 2>"$tmp/err"
ok "$(test $? -eq 1 && grep -q '^refit: .*zz-broken.lua:2:' "$tmp/err"; echo $?)" \
    "refit models fails on a broken model file, naming it"
is "$(cat "$tmp/out")" "" "and prints no part of its table"
"$REFIT" sim "$scen" --db "$tmp/full.db" >/dev/full 2>/dev/null
ok "$(test $? -ne 0; echo $?)" "a table that cannot be written is an error"
# auto's candidate names are never cut mid-word: the longest form (PXN off, a relay with fanout
# and depth, tiny DeepSeek-V3's eight roles) names every role whole (182 to 245 bytes here;
# they were cut at 159 before, "... shared_e").
cat >"$tmp/long.lua" <<EOS
return {
    model = "$SRCDIR/t/data/exec/tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 8, gpus_per_node = 1, nvlink = { domain_gpus = 1 },
                nic = { per_node = 1 }, fabric = { pxn = false } },
    train = { gpus = 1 },
    infer = { gpus = 7, first_gpu = 1, tp = 1, dp = 7 },
    staging_mb = 1,
    strategy = "auto",
    relay = { fanout = 2, depth = 2 },
}
EOS
"$REFIT" sim "$tmp/long.lua" --db "$tmp/long.db" --json >"$tmp/long.json"
ok $? "auto on tiny DeepSeek-V3 with PXN off and a relay tree"
"$SQLITE3" :memory: "SELECT value->>'candidate' FROM json_each(readfile('$tmp/long.json'),
    '\$.auto_candidates') UNION ALL SELECT readfile('$tmp/long.json')->>'auto_choice'" \
    >"$tmp/names"
s='=(broadcast|reshard|hierarchical|hybrid|mixed)'
is "$(grep -c -v -E "^pxn off \(NCCL_PXN_DISABLE=1\), [a-z_]+ sources(, no ring|, ring( fanout \
[0-9]+)?( depth [0-9]+)?)?: embedding$s attention$s dense_ffn$s expert$s shared_expert$s \
router$s norm$s lm_head$s$" "$tmp/names")|$(awk 'length > 160' "$tmp/names" | wc -l | tr -d ' ')" \
    "0|$(wc -l <"$tmp/names" | tr -d ' ')" \
    "every candidate's name and auto's choice name all eight roles whole (each over the 160 bytes they were cut at)"
"$REFIT" sim "$tmp/long.lua" --db "$tmp/long.db" >"$tmp/long.txt"
is "$(sed -n 3p "$tmp/long.txt" | sed 's/^ *//; s/ ([0-9]* candidates predicted, .*//')" "$(json "$tmp/long.json" '$.auto_choice')" \
    "the table's line under auto is its choice, whole"
done_testing
