#!/bin/sh
# End to end: `refit models` and `refit plan` on real model files; results checked in the
# JSON output and in the SQLite database.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/refit.db
scen=$SRCDIR/scripts/dsv3-h100.lua

"$REFIT" models --json >"$tmp/models.json"
ok $? "refit models --json succeeds"
count=$("$SQLITE3" :memory: "SELECT json_array_length(readfile('$tmp/models.json'))")
is "$count" 11 "eleven models are known"
p=$("$SQLITE3" :memory: "SELECT value->>'params' FROM json_each(readfile('$tmp/models.json'))
    WHERE value->>'name' = 'deepseek-v3'")
ok "$(test "$p" -gt 667700000000 && test "$p" -lt 674400000000; echo $?)" \
    "deepseek-v3 has 671B parameters within 0.5% ($p)"

# Reshard: each of the 8 TP32 inference replicas receives the model exactly once, except
# replicated tensors (norms, router, MLA down-projections), which each of its 256 GPUs holds.
"$REFIT" plan "$scen" --db "$db" --json >"$tmp/reshard.json"
ok $? "refit plan reshard succeeds"
mb=$(json "$tmp/reshard.json" '$.model_bytes')
rp=$(json "$tmp/reshard.json" '$.payload_bytes')
is "$rp" "$(sql "$db" "SELECT sum(CASE class WHEN 'replicated' THEN 256 ELSE 8 END * wire_bytes)
                       FROM tensor WHERE run_id = 1")" \
    "reshard delivers each shard once per holder: 8 x sharded + 256 x replicated bytes"
is "$(sql "$db" "SELECT count(DISTINCT dst_gpu) FROM transfer_each WHERE run_id = 1
                 AND tensor = 'model.layers.0.self_attn.q_b_proj.weight'")" 256 \
    "every inference GPU receives its q_b_proj shard"
is "$(json "$tmp/reshard.json" '$.logical_bytes')" "$(json "$tmp/reshard.json" '$.moved_bytes')" \
    "reshard logical volume is the bytes sent"
is "$(json "$tmp/reshard.json" '$.run_id')" 1 "first run gets id 1"

# Broadcast: the logical volume is all-gather plus broadcast, 2x the model.
"$REFIT" plan "$scen" --db "$db" --strategy broadcast --json >"$tmp/bcast.json"
ok $? "refit plan --strategy broadcast succeeds"
is "$(json "$tmp/bcast.json" '$.strategy')" broadcast "strategy override is applied"
is "$(json "$tmp/bcast.json" '$.logical_bytes')" "$((2 * mb))" "broadcast logical is 2x model"
is "$(json "$tmp/bcast.json" '$.payload_bytes')" "$((256 * mb))" \
    "every inference GPU receives the whole model"

"$REFIT" plan "$scen" --db "$db" --strategy hybrid --json >"$tmp/hybrid.json"
ok $? "refit plan --strategy hybrid succeeds"
is "$(json "$tmp/hybrid.json" '$.roles.expert.collectives')" 0 "experts take the reshard path"
is "$(json "$tmp/hybrid.json" '$.roles.attention.collectives')" \
    "$(json "$tmp/hybrid.json" '$.roles.attention.tensors')" "attention is broadcast"
hp=$(json "$tmp/hybrid.json" '$.payload_bytes')
ok "$(test "$hp" -gt "$rp" && test "$hp" -lt "$((256 * mb))"; echo $?)" \
    "hybrid payload lies between reshard and broadcast"

# The database holds the same figures as the JSON.
is "$(sql "$db" 'SELECT count(*) FROM run')" 3 "three runs stored"
is "$(sql "$db" "SELECT sum(bytes * dst_count) FROM transfer
                 WHERE run_id = 1 AND src_gpu != dst_gpu AND phase = 'deliver'")" \
    "$rp" "run 1 transfers add up to the payload"
is "$(sql "$db" "SELECT count(*) FROM collective WHERE run_id = 2")" \
    "$(sql "$db" "SELECT count(*) FROM tensor WHERE run_id = 2")" "one broadcast per tensor"

# FP8 inference: FP8 weights plus FP32 block scales on the wire.
sed 's/infer *= *{\(.*\)dtype *= *"bf16"/infer = {\1dtype = "fp8"/' "$scen" >"$tmp/fp8.lua"
"$REFIT" plan "$tmp/fp8.lua" --db "$db" --json >"$tmp/fp8.json"
ok $? "FP8 scenario plans"
fp=$(json "$tmp/fp8.json" '$.payload_bytes')
ok "$(test "$fp" -gt "$((rp / 2))" && test "$fp" -lt "$((rp * 53 / 100))"; echo $?)" \
    "FP8 payload is half of BF16 plus about 1% of scales ($fp)"
is "$(sql "$db" "SELECT count(*) FROM tensor WHERE run_id = 4 AND name LIKE '%weight_scale_inv'
                 AND wire_dtype = 'fp32'")" \
    "$(sql "$db" "SELECT count(*) FROM tensor WHERE run_id = 4 AND wire_dtype = 'fp8'")" \
    "one FP32 scale tensor per FP8 weight"

# A Hugging Face config.json instead of a model file: same tensors, same plan.
sed "s|model = \"deepseek-v3\"|model = \"$SRCDIR/t/data/hf/deepseek-v3/config.json\"|" \
    "$scen" >"$tmp/hf.lua"
"$REFIT" plan "$tmp/hf.lua" --db "$tmp/hf.db" --json >"$tmp/hf.json"
ok $? "a scenario may name a config.json"
is "$(json "$tmp/hf.json" '$.model_params')" "$(json "$tmp/reshard.json" '$.model_params')" \
    "config.json gives DeepSeek-V3's parameter count"
is "$(json "$tmp/hf.json" '$.payload_bytes')" "$rp" "and the same reshard payload"
printf '{ "model_type": "llama",\n  "hidden_size": 4096,,\n}\n' >"$tmp/broken.json"
sed "s|model = \"deepseek-v3\"|model = \"$tmp/broken.json\"|" "$scen" >"$tmp/broken.lua"
"$REFIT" plan "$tmp/broken.lua" --db "$tmp/hf.db" 2>"$tmp/err" >/dev/null
ok "$(test $? -ne 0; echo $?)" "malformed config.json exits non-zero"
ok "$(grep -q "broken.json:2:" "$tmp/err"; echo $?)" "its error names the JSON file and line"

# Bad input: one line naming file, line and field; nothing stored.
sed 's/tp = 32/tp = 30/' "$scen" >"$tmp/bad.lua"
"$REFIT" plan "$tmp/bad.lua" --db "$db" 2>"$tmp/err" >/dev/null
ok "$(test $? -ne 0; echo $?)" "inconsistent sizes exit non-zero"
line=$(grep -n 'tp = 30' "$tmp/bad.lua" | cut -d: -f1)
is "$(cat "$tmp/err")" \
    "refit: $tmp/bad.lua:$line: infer.gpus: 256 is not a multiple of tp*pp*dp = 30" \
    "the error is one line naming file, line and field"
is "$(sql "$db" 'SELECT count(*) FROM run')" 4 "nothing is stored for bad input"
"$REFIT" plan "$tmp/bad.lua" --db "$tmp/new.db" 2>/dev/null >/dev/null
ok "$(test $? -ne 0 && test ! -e "$tmp/new.db" && test ! -e "$tmp/new.db-wal"; echo $?)" \
    "and a database it would have created is not left behind"
"$REFIT" sim "$tmp/bad.lua" --db "$tmp/new.db" 2>/dev/null >/dev/null
ok "$(test $? -ne 0 && test ! -e "$tmp/new.db"; echo $?)" "nor by refit sim"
done_testing
