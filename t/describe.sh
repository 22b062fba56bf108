#!/bin/sh
# End to end: what a run's stored scenario implies is what the tools downstream use.
# `refit calibrate` re-simulates a run with its own overrides (oversubscription, PXN), not
# the named preset's, and a run stored before schema 7 on the preset with its node count;
# `refit-exec` replays a plan predicted without PXN with NCCL_PXN_DISABLE=1 on every rank
# (the MPI backend too: it sets and reports it), keeping a value the user set.
. "${SRCDIR:-.}/t/lib.sh"
: "${REFIT_EXEC:=./exec/refit-exec}"
: "${MPIRUN:=mpirun}"
data=$SRCDIR/t/data/describe

# rel A B: 1 when A and B agree to 1e-12 relative.
rel() { awk -v a="$1" -v b="$2" 'BEGIN { d = a / b - 1; print (d < 1e-12 && d > -1e-12) ? 1 : 0 }'; }

db=$tmp/cal.db
"$REFIT" sim "$data/over.lua" --db "$db" --json >"$tmp/over.json"
ok $? "refit sim over.lua (oversubscription 2, PXN off): run 1"
"$REFIT" sim "$data/plain.lua" --db "$db" --json >"$tmp/plain.json"
ok $? "refit sim plain.lua (neither): run 2"
pa=$(json "$tmp/over.json" '$.predicted_s')
pb=$(json "$tmp/plain.json" '$.predicted_s')
is "$(rel "$pa" "$pb")" 0 "the overrides move the prediction ($pb s -> $pa s)"
# A made-up measurement of run 1 alone (1.37 x its prediction), as t/calibrate.sh does.
sql "$db" "INSERT INTO measurement (run_id, backend, world_size, iters, warmup, seconds,
           status) SELECT run_id, 'mpi', 16, 5, 1, seconds * 1.37, 'ok' FROM prediction
           WHERE run_id = 1"
"$REFIT" calibrate --db "$db" --cluster dgx-h100 --out "$tmp/dgx.lua" --json >"$tmp/cal.json" \
    2>"$tmp/err"
ok $? "refit calibrate --cluster dgx-h100"
sed 's/^/# /' "$tmp/err"
is "$(json "$tmp/cal.json" '$.measurements')|$(json "$tmp/cal.json" '$.points[0].run_id')" "1|1" \
    "one measurement, of run 1"
before=$(json "$tmp/cal.json" '$.points[0].before_s')
is "$(rel "$before" "$pa")" 1 \
    "calibrate re-simulates run 1 with its overrides: before the fit it predicts the stored $pa s"
# The fitted file with the run's own overrides predicts what calibrate said after the fit.
after=$(json "$tmp/cal.json" '$.points[0].after_s')
sed "s|system = \"dgx-h100\"|system = \"$tmp/dgx.lua\"|; s|\"\.\./exec/|\"$SRCDIR/t/data/exec/|" \
    "$data/over.lua" >"$tmp/over-cal.lua"
"$REFIT" sim "$tmp/over-cal.lua" --db "$db" --json >"$tmp/again.json" 2>"$tmp/err"
ok $? "over.lua on the calibrated cluster"
sed 's/^/# /' "$tmp/err"
is "$(rel "$(json "$tmp/again.json" '$.predicted_s')" "$after")" 1 \
    "predicts calibrate's after ($after s): the fit ran with the run's overrides"

# A run stored by schema 6 has no description: re-simulated on the preset with its node
# count, it predicts what the preset predicts for its scenario today.
old=$tmp/old.db
"$SQLITE3" "$old" <"$SRCDIR/t/data/store/v6.sql"
"$REFIT" sim "$data/plain.lua" --db "$old" >/dev/null
ok $? "refit sim migrates the schema-6 file"
"$REFIT" sim "$SRCDIR/t/data/exec/llama-pair.lua" --db "$tmp/fresh.db" --json >"$tmp/fresh.json"
"$REFIT" calibrate --db "$old" --cluster dgx-h100 --out "$tmp/dgx-old.lua" --json \
    >"$tmp/cal.json" 2>"$tmp/err"
ok $? "refit calibrate on it"
sed 's/^/# /' "$tmp/err"
is "$(json "$tmp/cal.json" '$.points[0].run_id')|$(rel "$(json "$tmp/cal.json" \
    '$.points[0].before_s')" "$(json "$tmp/fresh.json" '$.predicted_s')")" "1|1" \
    "the old run: re-simulated on the preset with its node count"

if [ ! -x "$REFIT_EXEC" ] || ! command -v "$MPIRUN" >/dev/null 2>&1; then
    n=$((n + 1))
    echo "ok $n # SKIP refit-exec needs MPI (configure found none) and $MPIRUN"
    done_testing
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
over=
pass=
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then
    over=--oversubscribe
    pass="-x NCCL_PXN_DISABLE"
fi
# OpenMPI's own allocations in MPI_Init are never freed (see t/exec.sh).
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
edb=$tmp/exec.db
run() { # run ID [MPIRUN ARGS]: refit-exec on 2 ranks; stdout $tmp/out, stderr $tmp/err
    id=$1
    shift
    "$MPIRUN" $over "$@" -np 2 "$REFIT_EXEC" --db "$edb" --run "$id" --backend mpi --check \
        --iters 2 --warmup 1 $json >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
}
last_config() { sql "$edb" "SELECT exec_config FROM measurement ORDER BY id DESC LIMIT 1"; }

"$REFIT" plan "$data/pair-pxn-off.lua" --db "$edb" --json >"$tmp/plan.json"
off=$(json "$tmp/plan.json" '$.run_id')
"$REFIT" plan "$SRCDIR/t/data/exec/llama-pair.lua" --db "$edb" --json >"$tmp/plan.json"
on=$(json "$tmp/plan.json" '$.run_id')

json=--json
run "$off"
ok $rc "a PXN-off plan replays on 2 ranks"
is "$(json "$tmp/out" '$.nccl_env.NCCL_PXN_DISABLE.value')|$(json "$tmp/out" \
    '$.nccl_env.NCCL_PXN_DISABLE.set_by')|$(json "$tmp/out" '$.nccl_env.NCCL_PXN_DISABLE.plan_pxn')" \
    "1|refit-exec|0" "every rank ran with NCCL_PXN_DISABLE=1, set by refit-exec (--json nccl_env)"
is "$(last_config)" "mpi fill=host NCCL_PXN_DISABLE=1" "the measurement's exec_config says so"
json=
run "$off"
is "$(sed -n 2p "$tmp/out")" "  NCCL_PXN_DISABLE=1 (set by refit-exec: the plan's prediction \
assumed fabric.pxn = false)" "and the header says it"

# A value the user set wins, and is reported.
json=--json
NCCL_PXN_DISABLE=0
export NCCL_PXN_DISABLE
# shellcheck disable=SC2086 # $pass is empty or an option and its value, split on purpose
run "$off" $pass
unset NCCL_PXN_DISABLE
ok $rc "the PXN-off plan with NCCL_PXN_DISABLE=0 in the environment"
is "$(json "$tmp/out" '$.nccl_env.NCCL_PXN_DISABLE.value')|$(json "$tmp/out" \
    '$.nccl_env.NCCL_PXN_DISABLE.set_by')" "0|user" "the user's setting is kept and reported"
is "$(last_config)" "mpi fill=host NCCL_PXN_DISABLE=0" "and recorded"

# A plan with PXN (NCCL's default) sets nothing.
run "$on"
ok $rc "a PXN-on plan replays"
is "$(json "$tmp/out" '$.nccl_env')|$(last_config)" "{}|mpi fill=host" \
    "it sets no NCCL variable and says none"
done_testing
