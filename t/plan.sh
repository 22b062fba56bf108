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

# A Hugging Face folder (gpt-oss: sinks, biases, fused MXFP4-stored experts moved in BF16)
# and the vision part of a multimodal config.json plan from the command.
hf_scenario() {
    cat >"$tmp/$1.lua" <<EOF
return {
  model = $2,
  cluster = { system = "dgx-h100", nodes = 4 },
  train = { gpus = 16, tp = 2, ep = ${3:-8} },
  infer = { gpus = 16, first_gpu = 16, tp = 2 },
  allow_overcommit = true,
}
EOF
}
hf_scenario oss "\"$SRCDIR/t/data/hf/gpt-oss-120b\""
"$REFIT" plan "$tmp/oss.lua" --db "$tmp/hf.db" --json >"$tmp/oss.json" 2>/dev/null
is "$(json "$tmp/oss.json" '$.model') $(json "$tmp/oss.json" '$.model_params')" \
    "gpt-oss-120b 116829156672" "a snapshot folder plans: gpt-oss-120b, 116.83B parameters"
is "$(json "$tmp/oss.json" '$.model_bytes')" 233658313344 "and moves them in BF16"
hf_scenario vision "{ path = \"$SRCDIR/t/data/hf/llama-4-scout/config.json\", part = \"vision\" }" 1
"$REFIT" plan "$tmp/vision.lua" --db "$tmp/hf.db" --json >"$tmp/vision.json" 2>/dev/null
is "$(json "$tmp/vision.json" '$.model') $(json "$tmp/vision.json" '$.model_params')" \
    "llama-4-scout-vision 871932416" "part = 'vision' plans Llama 4's vision tower"
hf_scenario cache "\"$SRCDIR/t/data/hf-cache/models--acme--two\""
"$REFIT" plan "$tmp/cache.lua" --db "$tmp/hf.db" 2>"$tmp/err" >/dev/null
is "$(cat "$tmp/err")" "refit: $tmp/cache.lua:2: model: $SRCDIR/t/data/hf-cache/models--acme--two: \
2 snapshots and no refs/main to choose one; give the snapshot folder \
($SRCDIR/t/data/hf-cache/models--acme--two/snapshots/<commit>)" \
    "a cache folder with two snapshots and no refs/main is refused, named"

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
# A failing plan never removes a database: here another process stores run 1 in race.db
# while the failing plan is starting. The failing refit reads a models folder whose
# library module policy.lua is a FIFO, so it is held inside its Lua start-up (where an old
# build had already found race.db absent, and then deleted it on failing) until the good
# plan has finished; no timing is involved. (Scenario files themselves must be regular
# files, so the hold is in the library, which Lua's require reads.)
race=$tmp/race.db
small=$SRCDIR/t/data/sim/qwen3-30b.lua
mkdir -p "$tmp/held/lib"
for f in "$REFIT_MODELS"/*; do
    [ "$(basename "$f")" = lib ] || ln -s "$f" "$tmp/held/"
done
for f in "$REFIT_MODELS"/lib/*; do
    [ "$(basename "$f")" = policy.lua ] || ln -s "$f" "$tmp/held/lib/"
done
mkfifo "$tmp/held/lib/policy.lua"
REFIT_MODELS=$tmp/held "$REFIT" plan "$small" --db "$race" >"$tmp/held.out" 2>"$tmp/held.err" &
held=$!
# Should the held plan never open the FIFO, this reader releases the open below. Its
# output goes nowhere and its sleep is killed at the end: the TAP driver waits for every
# holder of the test's stdout.
(exec >/dev/null 2>&1; sleep 120 & echo $! >"$tmp/guard.pid"; wait $!; cat "$tmp/held/lib/policy.lua") &
guard=$!
exec 3>"$tmp/held/lib/policy.lua"
"$REFIT" plan "$small" --db "$race" --json >"$tmp/race.json"
ok $? "a plan stores run 1 while another plan of the same database is starting"
printf 'return {\n' >&3
exec 3>&-
wait "$held"
ok "$(test $? -eq 1; echo $?)" "the plan whose library has a syntax error fails"
ok "$(grep -q "^refit: .*policy.lua:2: " "$tmp/held.err" && test "$(wc -l <"$tmp/held.err")" -eq 1; echo $?)" \
    "with one line naming the file and line"
is "$(cat "$tmp/held.out")" "" "and prints nothing on stdout"
is "$(sql "$race" 'SELECT count(*) FROM run')" 1 "run 1 of the other process is still there"
kill "$guard" 2>/dev/null
wait "$guard" 2>/dev/null
kill "$(cat "$tmp/guard.pid")" 2>/dev/null
# The same with the scenario's own error: nothing is created, nothing removed.
printf 'return {\n' >"$tmp/syntax.lua"
"$REFIT" plan "$tmp/syntax.lua" --db "$race" 2>"$tmp/syntax.err" >/dev/null
is "$? $(cat "$tmp/syntax.err")" "1 refit: $tmp/syntax.lua:2: unexpected symbol near <eof>" \
    "a scenario with a syntax error: one line naming the scenario and line"
is "$(sql "$race" 'SELECT count(*) FROM run')" 1 "and the database keeps its run"
sed 's/tp = 32/tp = 30/' "$scen" >"$tmp/bad2.lua"
"$REFIT" plan "$tmp/bad2.lua" --db "$race" 2>/dev/null >/dev/null
ok "$(test $? -ne 0 && test "$(sql "$race" 'SELECT count(*) FROM run')" = 1; echo $?)" \
    "a bad plan on an existing database leaves it as it was"

# Options: an unknown one is named as unknown; a known one without its value says so.
for cmd in plan sim run report models; do
    "$REFIT" $cmd "$small" --jsn >"$tmp/opt.out" 2>"$tmp/opt.err"
    rc=$?
    case $cmd in plan | sim | models) near=", did you mean --json?" ;; *) near= ;; esac
    is "$rc $(cat "$tmp/opt.err")" "2 refit: unknown option --jsn$near (see refit $cmd --help)" \
        "refit $cmd: an unknown trailing option is unknown, exit 2"
    is "$(cat "$tmp/opt.out")" "" "refit $cmd: and nothing on stdout"
done
"$REFIT" plan "$small" --db 2>"$tmp/opt.err"
is "$? $(cat "$tmp/opt.err")" "2 refit: --db needs a value (see refit plan --help)" \
    "a trailing --db needs a value"
"$REFIT" plan "$small" --db --json 2>"$tmp/opt.err"
is "$? $(cat "$tmp/opt.err")" "2 refit: --db needs a value (see refit plan --help)" \
    "an option is not taken as --db's value"
"$REFIT" plan "$small" --db '' 2>"$tmp/opt.err"
is "$? $(cat "$tmp/opt.err")" "2 refit: --db needs a value (see refit plan --help)" \
    "nor is an empty one"
"$REFIT" plan "$small" --json=yes 2>"$tmp/opt.err"
is "$? $(cat "$tmp/opt.err")" "2 refit: --json takes no value (see refit plan --help)" \
    "a flag given a value says it takes none"
"$REFIT" report --db "$race" --run 2>"$tmp/opt.err"
is "$? $(cat "$tmp/opt.err")" "2 refit: --run needs a value (see refit report --help)" \
    "refit report: a trailing --run needs a value"
"$REFIT" plan 2>"$tmp/opt.err"
is "$? $(cat "$tmp/opt.err")" "2 refit: plan takes one SCENARIO, got 0 (see refit plan --help)" \
    "a missing scenario is one line"

# Labels are stored as text: one that is not UTF-8 is refused before anything is made.
"$REFIT" plan "$small" --db "$tmp/label.db" --label "$(printf 'a\377b')" >"$tmp/l.out" \
    2>"$tmp/l.err"
is "$? $(cat "$tmp/l.err")" "1 refit: --label: not valid UTF-8 (a label is stored as text)" \
    "a label that is not UTF-8 is refused"
ok "$(test ! -e "$tmp/label.db" && test ! -s "$tmp/l.out"; echo $?)" \
    "and no database is created, nothing printed"

# A path that is not UTF-8 is shown in JSON with U+FFFD for the bad byte.
weird=$tmp/sc-$(printf '\377').lua
cp "$small" "$weird"
"$REFIT" plan "$weird" --db "$tmp/weird.db" --json >"$tmp/weird.json"
ok $? "a scenario whose path is not UTF-8 plans, --json"
is "$(json "$tmp/weird.json" '$.scenario')" "$tmp/sc-$(printf '\357\277\275').lua" \
    "its JSON names the path with U+FFFD for the invalid byte"
"$REFIT" plan "$small" --db "$tmp/full.db" --json >/dev/full 2>"$tmp/full.err"
ok "$(test $? -ne 0 && grep -q '^refit: ' "$tmp/full.err"; echo $?)" \
    "output that cannot be written is an error, not exit 0"
# A models folder that is not refit's: one line saying so, not Lua's search path.
mkdir -p "$tmp/notmodels"
REFIT_MODELS=$tmp/notmodels "$REFIT" plan "$small" --db "$tmp/nm.db" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/notmodels: not refit's models folder (it has no \
lib/refit.lua); set REFIT_MODELS to the models folder of refit's source or installation" \
    "REFIT_MODELS naming another folder is one line saying so"
# M2N's ring (the relay benchmark's scenario A, DeepSeek-V3 from 64 GB200 trainers in domain 0 to 18 TP8
# replicas in domains 1 and 2). With the ring every byte leaves the trainers once (the
# leader of one domain forwards it to the other's); without it once per domain. Ring
# forwards are pipelined: hop 1 leader to leader, hop 2 the NVLink fan-out after it.
relay=$SRCDIR/scripts/dsv3-gb200-relay.lua
"$REFIT" plan "$relay" --db "$tmp/relay.db" --strategy hierarchical --json >"$tmp/ring.json"
ok $? "hierarchical with the ring plans scenario A"
sed 's/strategy = "auto",/strategy = "auto", relay = { ring = false },/' "$relay" >"$tmp/noring.lua"
"$REFIT" plan "$tmp/noring.lua" --db "$tmp/relay.db" --strategy hierarchical --json \
    >"$tmp/noring.json"
ok $? "and without it (relay = { ring = false })"
mb=$(json "$tmp/ring.json" '$.model_bytes')
out() { sql "$tmp/relay.db" "SELECT sum(bytes) FROM transfer_each WHERE run_id = $1
                             AND src_gpu < 64 AND dst_gpu >= 72"; }
is "$(out 1)" "$mb" "ring: the trainers send each model byte once ($mb)"
is "$(out 2)" "$((2 * mb))" "no ring: once per destination domain"
is "$(sql "$tmp/relay.db" "SELECT max(hop), count(DISTINCT round) FROM transfer_each
                           WHERE run_id = 1")" "2|$(json "$tmp/ring.json" '$.rounds')" \
    "ring forwards and fan-outs share their feed's round (hops 1 and 2), in every round"
is "$(json "$tmp/ring.json" '$.relay.ring') $(json "$tmp/noring.json" '$.relay.ring')" \
    "1 0" "--json says which relay structure was planned (true, false)"
is "$(sql "$tmp/relay.db" "SELECT relay_ring, chunk_bytes FROM run ORDER BY id")" \
    "1|4194304
0|4194304" "the run rows record the relay structure and the 4 MiB chunk"
# Placement: DeepSeek-V3's TP32 engines on GB200 from GPU 144, two per 72-GPU rack (packed,
# the third would take 208..239 across racks 2 and 3): GPUs 208..215 idle, none receives a
# byte, and the text, the JSON and the side row say how they were placed.
"$REFIT" plan "$SRCDIR/scripts/dsv3-gb200.lua" --db "$tmp/place.db" --json >"$tmp/place.json"
ok $? "refit plan dsv3-gb200 (engines placed domain by domain)"
is "$(json "$tmp/place.json" '$.infer_placement.placement') \
$(json "$tmp/place.json" '$.infer_placement.span') \
$(json "$tmp/place.json" '$.infer_placement.engines_per_domain')" "domain 136 2" \
    "--json: domain placement over 136 GPUs, 2 engines per rack"
is "$(sql "$tmp/place.db" "SELECT count(*), min(dst_gpu), max(dst_gpu),
                                  count(*) FILTER (WHERE dst_gpu BETWEEN 208 AND 215)
                           FROM (SELECT DISTINCT dst_gpu FROM transfer_each)")" "128|144|279|0" \
    "deliveries reach the 128 engine GPUs 144..207 and 216..279, none of the idle 208..215"
"$REFIT" plan "$SRCDIR/scripts/dsv3-gb200.lua" --db "$tmp/place.db" >"$tmp/place.txt"
is "$(grep '^  infer' "$tmp/place.txt")" \
    "  infer   128 GPUs from 144   tp32 pp1 dp1 ep1 x4 replicas, 2 per 72-GPU domain, bf16" \
    "the infer line says how the engines were placed"
is "$(sql "$tmp/place.db" "SELECT DISTINCT infer_layout FROM run")" \
    "tp32 pp1 dp1 ep1 x4 replicas, 2 per 72-GPU domain" "and so does the run's infer_layout"
done_testing
