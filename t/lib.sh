# shellcheck shell=sh
# TAP helpers for the end-to-end shell tests. Tests run the real `refit` binary ($REFIT) on
# the real model files ($REFIT_MODELS) and check results with sqlite3 ($SQLITE3).
set -u
n=0
failed=0
: "${REFIT:=./refit}"
: "${SQLITE3:=sqlite3}"
: "${SRCDIR:=.}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/refit-t.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Open MPI 4.1 keeps its session directory in /tmp/ompi.<host>.<uid>, shared by every mpirun
# of the user; two starting at once (tests run in parallel, make -j2 check) race on it and
# one fails with "mkdir ... File exists" in orte_init (seen: 1 run in 30 of t/gpu-check.sh).
# Each test's mpiruns get a base of their own.
OMPI_MCA_orte_tmpdir_base=$tmp
export OMPI_MCA_orte_tmpdir_base
# No Hugging Face cache of the user's leaks into a test: a framework config's model id is
# looked up there (sim/cmd.c cmd_open); a test that wants one sets HF_HUB_CACHE itself.
HF_HUB_CACHE=$tmp/no-hf-cache
export HF_HUB_CACHE


ok() { # ok CONDITION-EXIT-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
is() { # is GOT WANT DESCRIPTION
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else
        echo "not ok $n - $3"; echo "#   got:  '$1'"; echo "#   want: '$2'"; failed=1; fi
}
# json FILE PATH: one value of a JSON document, read with SQLite's JSON functions.
json() { "$SQLITE3" :memory: "SELECT json_extract(readfile('$1'), '$2')"; }
sql() { "$SQLITE3" "$1" "$2"; }
# wait_until COMMAND...: runs COMMAND every 0.1 s until it succeeds, for at most 60 s (a
# background job's file appearing); its status is the last run's.
wait_until() {
    _tries=0
    until "$@"; do
        [ $_tries -ge 600 ] && return 1
        sleep 0.1
        _tries=$((_tries + 1))
    done
}
done_testing() { echo "1..$n"; exit "$failed"; }
# replay_checked DB RUN RANKS WHAT: refit-exec replays run RUN of DB on RANKS MPI ranks with
# --check (two tests: the replay succeeds, every inference byte landed), or skips both
# where there is no refit-exec ($REFIT_EXEC) or mpirun ($MPIRUN).
replay_checked() {
    : "${REFIT_EXEC:=./exec/refit-exec}" "${MPIRUN:=mpirun}"
    if [ -x "$REFIT_EXEC" ] && command -v "$MPIRUN" >/dev/null 2>&1; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        _over=
        if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then _over=--oversubscribe; fi
        # shellcheck disable=SC2086 # _over is empty or one word
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$MPIRUN" $_over -np "$3" \
            "$REFIT_EXEC" --db "$1" --run "$2" --backend mpi --check --iters 1 --warmup 0 \
            >"$tmp/replay.out" 2>&1
        ok $? "refit-exec --backend mpi --check replays $4 on $3 ranks"
        grep -q ': 0 wrong elements' "$tmp/replay.out"
        ok $? "every inference byte landed"
    else
        echo "ok $((n + 1)) # SKIP refit-exec needs MPI"; n=$((n + 1))
        echo "ok $((n + 1)) # SKIP refit-exec needs MPI"; n=$((n + 1))
    fi
}
