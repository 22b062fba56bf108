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
done_testing() { echo "1..$n"; exit "$failed"; }
