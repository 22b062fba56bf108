#!/bin/sh
# End to end: the memory check of `refit plan`/`sim`. DeepSeek-V3 served by one 8-GPU H100
# engine (168 GB of weights per 80 GB GPU) is refused with the figures and nothing is
# written; allowed as a what-if it plans with a warning and says so in its output; the
# memory line of NeMo RL's layout agrees with the store's own tensor table.
. "${SRCDIR:-.}/t/lib.sh"
db=$tmp/refit.db

cat >"$tmp/dsv3-8.lua" <<'EOF2'
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 33 },
    train = { gpus = 256, tp = 1, pp = 16, ep = 16 },
    infer = { gpus = 8, first_gpu = 256, tp = 8 },
}
EOF2
"$REFIT" plan "$tmp/dsv3-8.lua" --db "$db" >"$tmp/out" 2>"$tmp/err"
is "$?" 1 "DeepSeek-V3 on 8 H100 inference GPUs is refused"
is "$(cat "$tmp/err")" "refit: $tmp/dsv3-8.lua:5: infer: the layout does not fit: GPU 256 (stage 0) \
needs 172.8 GB of 72.0 (weights 169.6, staging 3.2), KV cache headroom -100.8 GB (the engine's \
share is infer.gpu_memory_utilization of hbm_gb); shard further (more tp, ep or pp, or more \
GPUs), or set allow_overcommit = true for a what-if" "with the side, the GPU, its parts and the way out"
ok "$(test ! -e "$db"; echo $?)" "and no database is created"
is "$(wc -c <"$tmp/out")" 0 "nothing printed on stdout"

sed 's/^return {/return { allow_overcommit = true,/' "$tmp/dsv3-8.lua" >"$tmp/what-if.lua"
"$REFIT" plan "$tmp/what-if.lua" --db "$db" >"$tmp/out" 2>"$tmp/err"
ok $? "with allow_overcommit it plans"
is "$(cat "$tmp/err")" "refit: warning: $tmp/what-if.lua: the layout does not fit in the GPUs' \
memory (allow_overcommit: a what-if)" "with a warning"
is "$(grep -c 'memory infer: .* DOES NOT FIT (allow_overcommit)$' "$tmp/out")" 1 \
    "its memory line says it does not fit"
"$REFIT" plan "$tmp/what-if.lua" --db "$db" --json >"$tmp/w.json" 2>/dev/null
is "$(json "$tmp/w.json" '$.memory.overcommitted') $(json "$tmp/w.json" '$.memory.infer.fits')" \
    "1 0" "--json: overcommitted, the inference side does not fit"

# NeMo RL's H100 layout (TP1 PP16 EP16 -> TP32 x 8): the inference GPU's weights are its
# shards of every tensor as stored (replicated ones whole, the others a 32nd: DeepSeek-V3's
# dims all divide 32), and the parts add up.
"$REFIT" sim "$SRCDIR/scripts/dsv3-h100.lua" --db "$db" --strategy reshard --json >"$tmp/s.json"
ok $? "refit sim of dsv3-h100 succeeds"
run=$(json "$tmp/s.json" '$.run_id')
is "$(json "$tmp/s.json" '$.memory.infer.weights_bytes')" \
    "$(sql "$db" "SELECT sum(CASE class WHEN 'replicated' THEN wire_bytes ELSE wire_bytes / 32 END)
                  FROM tensor WHERE run_id = $run")" \
    "an inference GPU's weights are its shards of the stored tensors"
m() { json "$tmp/s.json" "\$.memory.$1"; }
is "$(m infer.total_bytes)" "$(($(m infer.weights_bytes) + $(m infer.staging_bytes)))" \
    "inference: weights and staging"
is "$(m train.total_bytes)" "$(($(m train.weights_bytes) + $(m train.grads_bytes) + \
    $(m train.optimizer_bytes) + $(m train.staging_bytes)))" \
    "training: weights, grads, optimizer, staging"
is "$(m train.grads_bytes)" "$(m train.weights_bytes)" "BF16 gradients as large as the BF16 weights"
is "$(json "$tmp/s.json" '$.memory.infer.budget_bytes')" 72000000000 \
    "the engine's share: 0.9 of the H100's 80 GB"
is "$(json "$tmp/s.json" '$.memory.train.stage') $(json "$tmp/s.json" '$.memory.train.gpu')" \
    "1 16" "the worst training GPU is stage 1's first (4 layers; stage 0 has 3)"
# The memory estimate made before any work (rf_plan_estimate): exact in boxes and deliveries
# against the plan it predicts, for reshard, hierarchical and broadcast on the quick start.
for s in reshard hierarchical broadcast; do
    "$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --strategy $s --db "$tmp/e-$s.db" --json \
        >"$tmp/e.json"
    is "$(json "$tmp/e.json" '$.estimate.boxes') $(json "$tmp/e.json" '$.estimate.deliveries')" \
        "$(sql "$tmp/e-$s.db" "SELECT (SELECT count(*) FROM box) || ' ' ||
                                      (SELECT sum(dst_count) FROM transfer)")" \
        "$s: the estimate's boxes and deliveries are the plan's"
done
is "$(json "$tmp/e.json" '$.estimate.deliveries')" 3635 "broadcast: one gather per source cell"

# A plan too large for the machine is refused up front with its estimate: DeepSeek-V3 from
# FSDP on 2048 H100 to 1024 (TP8 DP8 EP64) would need 818 M deliveries (it used to be
# killed by the kernel past 20 GB).
cat >"$tmp/fsdp.lua" <<'EOF2'
return {
    allow_overcommit = true,
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 384 },
    train = { gpus = 2048, tp = 1, pp = 1, ep = 1, fsdp = true },
    infer = { gpus = 1024, first_gpu = 2048, tp = 8, dp = 8, ep = 64, dtype = "fp8" },
    strategy = "auto",
}
EOF2
# Under a limit that fits only broadcasts, auto answers with the best broadcast and says
# what it left out; under one that fits nothing it is refused with both estimates.
REFIT_THREADS=2 "$REFIT" sim "$tmp/fsdp.lua" --db "$tmp/big.db" --max-memory 0.1 >"$tmp/out" \
    2>"$tmp/err"
is "$?" 1 "DeepSeek-V3 from FSDP on 2048 GPUs to 1024 is refused under --max-memory 0.1"
is "$(cat "$tmp/err")" "refit: $tmp/fsdp.lua: the run needs an estimated 105 GB (818 M \
deliveries of 2.93 M boxes; broadcast alone, auto's fallback, 0.271 GB), more than the limit \
of 0.1 GB (--max-memory, by default three quarters of this machine's memory): nothing was \
planned" "with the estimate of one auto worker, its counts, broadcast's estimate and the limit"
ok "$(test ! -e "$tmp/big.db"; echo $?)" "and no database is created"
"$REFIT" plan "$tmp/fsdp.lua" --strategy broadcast --db "$tmp/big.db" --max-memory 16 \
    >/dev/null 2>&1
ok $? "broadcast of the same layout fits the limit (a gather per source cell)"
# The quick start's direct plans need 0.126 GB with one worker: under 0.1 GB auto chooses
# among broadcasts, each source choice on both clusters, and predicts what --strategy
# broadcast predicts or better.
"$REFIT" sim "$SRCDIR/scripts/dsv3-h100.lua" --strategy auto --db "$tmp/b.db" --json \
    --max-memory 0.1 >"$tmp/b.json"
ok $? "auto under 0.1 GB, which no direct plan fits, answers"
is "$(json "$tmp/b.json" '$.auto_left_out.estimate_bytes')" 126408664 \
    "--json: what it left out, with the estimate that ruled it out"
is "$(json "$tmp/b.json" '$.auto_left_out.strategies')" '["reshard","hierarchical","hybrid"]' \
    "the strategies left out"
is "$(sql "$tmp/b.db" "SELECT group_concat(DISTINCT strategy) FROM tensor")" broadcast \
    "every tensor of its plan is broadcast"
is "$(sql "$tmp/b.db" "SELECT json_extract(scenario_json, '$.auto.left_out_bytes') FROM run")" \
    126408664 "the run's description records it"
"$REFIT" sim "$SRCDIR/scripts/dsv3-h100.lua" --strategy broadcast --db "$tmp/b.db" --json \
    >"$tmp/bc.json"
ok "$(awk -v a="$(json "$tmp/b.json" '$.predicted_s')" -v b="$(json "$tmp/bc.json" '$.predicted_s')" \
    'BEGIN { exit !(a <= b) }'; echo $?)" "its prediction is broadcast's or better"
"$REFIT" sim "$SRCDIR/scripts/dsv3-h100.lua" --strategy auto --db "$tmp/b.db" \
    --max-memory 0.1 >"$tmp/b.out"
left="broadcasts only: reshard, hierarchical and hybrid left out, their plans need an estimated \
0.126 GB (--max-memory 0.1 GB)"
is "$(grep -c "^ *$left\$" "$tmp/b.out")" 1 "the table says so"
# Auto's workers each hold a plan: under a limit that holds one and not two it runs with one,
# to the same plan.
REFIT_THREADS=2 "$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --strategy auto --db "$tmp/a.db" \
    --json >"$tmp/a2.json"
REFIT_THREADS=2 "$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --strategy auto --db "$tmp/a.db" \
    --json --max-memory 0.2 >"$tmp/a1.json"
ok $? "auto under 0.2 GB, which holds one worker's plan and not two, plans"
is "$(json "$tmp/a1.json" '$.estimate.memory_bytes') $(json "$tmp/a2.json" '$.estimate.memory_bytes')" \
    "126408664 252817328" "with one worker's estimate, half of two's"
is "$(sql "$tmp/a.db" "SELECT count(*) || ' ' || count(DISTINCT r.transfers || ' ' || r.moved_bytes
                       || ' ' || p.seconds) FROM run r JOIN prediction p ON p.run_id = r.id")" \
    "2 1" "and the same plan and prediction as with two"
"$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --db "$tmp/z.db" --max-memory 0.05 2>"$tmp/err" \
    >/dev/null
is "$?" 1 "the quick start's reshard plan is refused under 0.05 GB"
"$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --db "$tmp/z.db" --max-memory 0 >/dev/null
ok $? "and planned with --max-memory 0 (no limit)"
"$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --db "$tmp/z.db" --max-memory 125M >/dev/null
ok $? "125M: just above its 124.5 MB estimate (the plan's runs and the schedule's pieces)"
"$REFIT" plan "$SRCDIR/scripts/dsv3-h100.lua" --db "$tmp/z.db" --max-memory 124M 2>"$tmp/err" \
    >/dev/null
is "$? $(grep -o 'needs an estimated [0-9.]* GB' "$tmp/err")" "1 needs an estimated 0.125 GB" \
    "124M: just below it, refused with the estimate"
"$REFIT" sim "$SRCDIR/scripts/dsv3-h100.lua" --db "$tmp/z.db" --max-memory 8x 2>"$tmp/err"
is "$?" 2 "a size that is not one is a usage error"
is "$(cat "$tmp/err")" "refit: --max-memory 8x: expected a size in GB (or with M, G or T), 0 for \
no limit (see refit sim --help)" "that names the flag and the forms"
done_testing
