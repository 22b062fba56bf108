#!/bin/sh
# refit-exec links the core (sim/librefit_core.a) and never the simulator: no symbol the
# simulator's library (sim/librefit.a) defines, and none of the simulator's names, is in it.
. "${SRCDIR:-.}/t/lib.sh"
: "${NM:=nm}"
exe=${REFIT_EXEC:-}
if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    echo "1..0 # SKIP refit-exec not built (configure found no MPI)"
    exit 0
fi
simlib=$(dirname "$REFIT")/sim/librefit.a
# The simulator by its names: flow engine, simulation and bound, planner, topology and
# rings, auto and search, the step, memory, scheduler, Lua bridge and sandbox, framework
# profiles, calibration, report, and the description's writer (its reader is core).
sim_names='^rf_(flowsim_|simulate|sim_|bound|lower_|plan_build|plan_need|plan_role|relay|schedule|topology_|link_|p2p|ring_|auto|search|estimate|step_|memory_|scenario|lua|luaopen|sandbox|fw_|framework|cal_|calibrat|report|describe$|describe_text|describe_cluster|cluster_|json_|prediction|store_save_run)'
defined() { "$NM" "$1" 2>/dev/null | awk '$2 ~ /^[TDRB]$/ && $3 ~ /^rf_/ {print $3}' | sort -u; }
defined "$exe" >"$tmp/exec.syms"
defined "$REFIT" >"$tmp/refit.syms"
"$NM" "$simlib" 2>/dev/null | awk '$2 ~ /^[TDRB]$/ && $3 ~ /^rf_/ {print $3}' | sort -u \
    >"$tmp/simlib.syms"

# The check reads real symbols: the core's reader is in refit-exec, the simulator in refit.
grep -qx rf_store_load_run "$tmp/exec.syms"
ok $? "nm reads refit-exec's symbols (rf_store_load_run, the core's reader, is there)"
grep -Eq "$sim_names" "$tmp/refit.syms"
ok $? "the simulator's names match refit's own symbols (the pattern can fail)"
test -s "$tmp/simlib.syms" && grep -qx rf_flowsim_run "$tmp/simlib.syms"
ok $? "sim/librefit.a defines the simulator (rf_flowsim_run)"
got=$(grep -E "$sim_names" "$tmp/exec.syms" | tr '\n' ' ')
is "$got" "" "refit-exec has none of the simulator's names"
got=$(comm -12 "$tmp/exec.syms" "$tmp/simlib.syms" | tr '\n' ' ')
is "$got" "" "refit-exec has no symbol sim/librefit.a defines"
done_testing
