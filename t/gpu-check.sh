#!/bin/sh
# scripts/gpu-check where no GPU is: it skips with its reason; its testing mode runs the same
# flow on host memory with the MPI backend (refit-exec --probe, then every case replayed and
# checked), on one "GPU" (colocated, FP8, two ranks on it) and on two, writing the database
# and the log into $OUT as the device tool asks; a bundle that is not one is refused.
. "${SRCDIR:-.}/t/lib.sh"
: "${REFIT_EXEC:=./exec/refit-exec}"
: "${MPIRUN:=mpirun}"
if [ ! -x "$REFIT_EXEC" ] || ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "1..0 # SKIP gpu-check needs refit-exec (configure found no MPI) and $MPIRUN"
    exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
gpu_check=$SRCDIR/scripts/gpu-check
build=$(dirname "$REFIT")

if ! command -v nvidia-smi >/dev/null 2>&1; then
    out=$(GPU_CHECK_BUNDLE=none "$gpu_check" 2>&1)
    is "$? $out" "0 gpu-check: SKIP: no nvidia-smi: this machine has no NVIDIA GPU" \
        "gpu-check skips with a reason where no GPU is"
fi

# mode GPUS OUT: the testing mode on GPUS host "GPUs", output folder OUT ($OUT).
mode() {
    GPU_CHECK_BACKEND=mpi GPU_CHECK_GPUS=$1 GPU_CHECK_SIZE=tiny GPU_CHECK_NO_MAKE=1 \
        GPU_CHECK_BUNDLE=none GPU_CHECK_BUILD=$build OUT=$2 "$gpu_check" >"$tmp/out" 2>&1
}
mode 2 "$tmp/two"
ok $? "gpu-check's flow runs on 2 ranks (MPI backend)"
is "$(grep -c ' ok$' "$tmp/out")" 13 "two GPUs: six probes and seven replays verified"
[ "$(grep -c ' ok$' "$tmp/out")" = 13 ] || sed 's/^/# /' "$tmp/out" "$tmp"/two/exec-*.err
is "$(grep -c '^disjoint-2gpu .* ok$' "$tmp/out")" 4 "every strategy of the disjoint case"
ok "$(grep -q '^fp8-2gpu .* reshard .* ok$' "$tmp/out"; echo $?)" "the FP8 case"
is "$(sql "$tmp/two/gpu-check.db" "SELECT count(*) FROM measurement WHERE status = 'ok'")" 7 \
    "the database in \$OUT holds the seven measurements"
ok "$(cmp -s "$tmp/out" "$tmp/two/gpu-check.log"; echo $?)" "the log in \$OUT is what it printed"
is "$(sed -n 's/^copy *\([a-zA-Z0-9_-]*\) .* memcpy_gbps *1920 .* ok$/\1/p' "$tmp/out" | grep -c .)" 1 \
    "the copy probe stands beside the dgx-h200 preset's memcpy_gbps"
ok "$(grep -q '^narrow .* quant_gbps *1920 ' "$tmp/out"; echo $?)" \
    "the FP8 conversion probe stands beside quant_gbps"
ok "$(grep -q 'calibration = { memcpy_gbps = [0-9]*, quant_gbps = [0-9]* }' "$tmp/out"; echo $?)" \
    "it prints the calibration line to fold into the preset"

mode 1 "$tmp/one"
ok $? "gpu-check's flow runs on 1 GPU (MPI backend)"
is "$(grep -c -E '^(colocated|fp8|shared)-1gpu .* ok$' "$tmp/out")" 7 \
    "one GPU: colocated (3), FP8 (2) and two ranks on it (2), verified"
[ "$(grep -c -E '^(colocated|fp8|shared)-1gpu .* ok$' "$tmp/out")" = 7 ] || sed 's/^/# /' "$tmp/out"

GPU_CHECK_BACKEND=mpi GPU_CHECK_BUNDLE=$tmp/nothing "$gpu_check" >"$tmp/out" 2>&1
is "$? $(cat "$tmp/out")" \
    "2 gpu-check: CANNOT RUN: GPU_CHECK_BUNDLE=$tmp/nothing has no env.sh (make it with scripts/gpu-bundle)" \
    "a bundle folder without env.sh is refused with the way to make one"
done_testing
