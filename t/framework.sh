#!/bin/sh
# End to end: a scenario's framework profile (models/frameworks/*.lua) reaches the run's
# stored description, exactly as resolved, and only there: a profile-free run's description
# has no framework key, and the profile leaves the plan's transfers and rounds as refit plans
# them (only its broadcasts' communicator, roots and wire dtype follow the profile;
# the step model that uses it, sim/step.c, is checked by t/step.sh).
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/framework
db=$tmp/fw.db
fw() { sql "$db" "SELECT json_extract(scenario_json, '\$.framework$2') FROM run WHERE id = $1"; }

"$REFIT" plan "$data/plain.lua" --db "$db" >/dev/null
ok $? "refit plan plain.lua (no profile): run 1"
"$REFIT" plan "$data/nemo-rl.lua" --db "$db" >/dev/null
ok $? "refit plan nemo-rl.lua (framework = \"nemo-rl\"): run 2"
is "$(sql "$db" "SELECT json_type(scenario_json, '\$.framework') IS NULL FROM run WHERE id = 1")" 1 \
    "a profile-free run's description has no framework key"
is "$(fw 2 .name)|$(fw 2 .strategies)|$(fw 2 .source)" \
    "nemo-rl|[\"broadcast\",\"hybrid\"]|$REFIT_MODELS/frameworks/nemo-rl.lua" \
    "run 2 names the profile, its strategies and its file"
# 0.02 x HBM capped at 5 GiB = 5 x 2^30 bytes; 2 buffers; NRL_REFIT_NUM_STREAMS stage groups.
is "$(fw 2 .broadcast.bucket.hbm_fraction)|$(fw 2 .broadcast.bucket.max_bytes)|$(fw 2 \
    .broadcast.bucket.bytes)|$(fw 2 .broadcast.buffers)|$(fw 2 .broadcast.communicator)|$(fw 2 \
    .broadcast.root)|$(fw 2 .broadcast.gather)|$(fw 2 .broadcast.quantize)|$(fw 2 \
    .broadcast.pack_copy)" "0.02|5368709120|0|2|all|first|export|receiver_full|1" \
    "run 2: NeMo RL's broadcast path as the profile cites it, bucket cap in bytes"
is "$(fw 2 .reshard.stage_groups)|$(fw 2 .reshard.misc_after_bulk)|$(fw 2 \
    .reshard.stack_experts)|$(fw 2 .reshard.fused_copy)|$(fw 2 .reshard.calls)" "2|1|1|1|1.0" \
    "run 2: NeMo RL's nccl_reshard path as the profile cites it"
# Without the framework key and the scenario's own path the two descriptions are the same
# bytes, and the plans are the same plan.
is "$(sql "$db" "SELECT count(DISTINCT json_remove(scenario_json, '\$.framework', '\$.source'))
    FROM run")" 1 "the profile adds the framework key and changes nothing else described"
is "$(sql "$db" "SELECT count(DISTINCT payload_bytes || '/' || transfers || '/' || rounds)
    FROM run")" 1 "the profile changes nothing planned (the step model is the lead's)"

"$REFIT" plan "$data/override.lua" --db "$db" >/dev/null
ok $? "refit plan override.lua (nemo-rl, buffers 1, 256 MiB buckets): run 3"
is "$(fw 3 .broadcast.buffers)|$(fw 3 .broadcast.bucket.bytes)|$(fw 3 \
    .broadcast.bucket.hbm_fraction)|$(fw 3 .reshard.stage_groups)" "1|268435456|0.0|2" \
    "run 3: the overrides replace buffers and the bucket (256 x 2^20 bytes), the rest is kept"
"$REFIT" plan "$data/custom.lua" --db "$db" >/dev/null
ok $? "refit plan custom.lua (a profile file beside the scenario): run 4"
is "$(fw 4 .name)|$(sql "$db" "SELECT json_type(scenario_json, '\$.framework.broadcast') IS NULL
    FROM run WHERE id = 4")|$(fw 4 .reshard.calls)" "my-reshard|1|3.0" \
    "run 4: the file's profile, without the broadcast section it lacks"

# m2n, named from a scenario written here: no broadcast path, reshard and hierarchical.
sed "s|\"\.\./exec/|\"$SRCDIR/t/data/exec/|; s|\"nemo-rl\"|\"m2n\"|; s|\"broadcast\"|\"reshard\"|" \
    "$data/nemo-rl.lua" >"$tmp/m2n.lua"
"$REFIT" plan "$tmp/m2n.lua" --db "$db" >/dev/null
ok $? "refit plan with framework = \"m2n\": run 5"
is "$(fw 5 .strategies)|$(sql "$db" "SELECT json_type(scenario_json, '\$.framework.broadcast')
    IS NULL FROM run WHERE id = 5")|$(fw 5 .reshard.stage_groups)" \
    "[\"reshard\",\"hierarchical\"]|1|0" "run 5: m2n runs reshard and hierarchical only"

# A bad profile is refused before anything is stored, naming the scenario's line.
"$REFIT" plan "$SRCDIR/t/data/bad/framework-typo.lua" --db "$db" >/dev/null 2>"$tmp/err"
rc=$?
is "$([ $rc -ne 0 ] && echo fail)|$(cat "$tmp/err")" \
    "fail|refit: $SRCDIR/t/data/bad/framework-typo.lua:9: framework.broadcast.bufers: unknown key \
'bufers' (did you mean 'buffers'?)" "a misspelt override is refused with file:line and field"
is "$(sql "$db" "SELECT count(*) FROM run")" 5 "and no run is stored for it"
done_testing
