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
is "$(grep -c ' ok$' "$tmp/out")" 15 \
    "two GPUs: eight probes (six and the MPI send and barrier) and seven replays verified"
[ "$(grep -c ' ok$' "$tmp/out")" = 15 ] || sed 's/^/# /' "$tmp/out" "$tmp"/two/exec-*.err
is "$(grep -c '^disjoint-2gpu .* ok$' "$tmp/out")" 4 "every strategy of the disjoint case"
ok "$(grep -q '^fp8-2gpu .* reshard .* ok$' "$tmp/out"; echo $?)" "the FP8 case"
is "$(sql "$tmp/two/gpu-check.db" "SELECT count(*) FROM measurement WHERE status = 'ok'")" 7 \
    "the database in \$OUT holds the seven measurements"
ok "$(cmp -s "$tmp/out" "$tmp/two/gpu-check.log"; echo $?)" "the log in \$OUT is what it printed"
is "$(sed -n 's/^copy *\([a-zA-Z0-9_-]*\) .* memcpy_gbps *1920 .* ok$/\1/p' "$tmp/out" | grep -c .)" 1 \
    "the copy probe stands beside the dgx-h200 preset's memcpy_gbps"
ok "$(grep -q '^narrow .* quant_gbps *1920 ' "$tmp/out"; echo $?)" \
    "the FP8 conversion probe stands beside quant_gbps"
# The calibration's per-call probes: host memory has the MPI send and barrier, which stand
# beside nccl_call_us and barrier_us in microseconds; no kernel, group or pinned copy, which
# say so and are left out of the calibration line.
is "$(grep -c -E '^(send4k|barrier) +MPI_I[A-Za-z/_]+ +[0-9]+\.[0-9]{3}  (nccl_call_us|barrier_us) .* ok$' \
    "$tmp/out")" 2 "the MPI send and barrier are timed in microseconds beside their fields"
is "$(grep -c -E '^(launch|latency|group|h2d|d2h) .*(kernel_launch_us|nccl_call_us|h2d_gbps|d2h_gbps) .* not measured \(host backend\)$' \
    "$tmp/out")" 5 "kernel launches, the empty group and the pinned copies are not measured on host memory"
ok "$(grep -q -E '^barrier .* barrier_us +[0-9.]+ +[0-9.]+  ok$' "$tmp/out"; echo $?)" \
    "the barrier stands beside the preset's barrier_us (cluster.lua's default), with the ratio"
cal=$(sed -n 's/.*calibration = { \(.*\) }$/\1/p' "$tmp/out")
ok "$(echo "$cal" | grep -q -E '^memcpy_gbps = [0-9]+, quant_gbps = [0-9]+, nccl_call_us = [0-9.e+-]+, barrier_us = [0-9.e+-]+$'; echo $?)" \
    "it prints the calibration line to fold into the preset, with the MPI run's nccl_call_us and barrier_us"
is "$(echo "$cal" | awk -F', ' '{ for (i = 3; i <= NF; i++) { split($i, kv, " = "); if (kv[2] + 0 > 0) n++ } }
    END { print n + 0 }')" 2 "both positive"
is "$(sed -n 's/^barrier .* \([0-9.]*\)  barrier_us .*/\1/p' "$tmp/out" |
    awk -v c="$(echo "$cal" | sed -n 's/.*barrier_us = \([0-9.e+-]*\).*/\1/p')" '{ d = $1 / c - 1; print (d < 0.05 && d > -0.05) }')" 1 \
    "the line's barrier_us is the barrier probe's figure"

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
