#!/bin/sh
# End to end: `refit sim` predicts three small scenarios on the localhost preset,
# `refit-exec --backend mpi --check` replays each on 2 ranks, and `refit calibrate` fits the
# preset's knobs to those measurements: the error drops, the calibrated cluster file loads
# and predicts what calibrate said it would.
. "${SRCDIR:-.}/t/lib.sh"
: "${REFIT_EXEC:=./exec/refit-exec}"
: "${MPIRUN:=mpirun}"
db=$tmp/calib.db
data=$SRCDIR/t/data/calib

# Command line and the no-measurement error need no MPI.
"$REFIT" calibrate --help >"$tmp/out" 2>&1
is "$? $(head -1 "$tmp/out")" \
    "0 usage: refit calibrate --db FILE --cluster NAME [--framework NAME] [--out FILE] [--json]" \
    "calibrate --help prints the usage"
"$REFIT" calibrate --cluster localhost >/dev/null 2>&1
is "$?" 2 "calibrate without --db exits 2"
"$REFIT" sim "$data/llama-pair.lua" --db "$db" >/dev/null
ok $? "refit sim: a prediction on localhost, not measured"
"$REFIT" calibrate --db "$db" --cluster localhost --out "$tmp/none.lua" >"$tmp/out" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $db: no usable measurement: no run predicted on cluster \
'localhost' (refit sim) has an ok measurement (refit-exec --check, or refit measure)" \
    "no measurement: a clear error"
ok "$(test ! -e "$tmp/none.lua"; echo $?)" "and no file written"
# A time no refit takes, stored by another tool (refit measure refuses it): refused by name,
# not fitted into 300-digit errors.
cp "$db" "$tmp/tiny.db"
sql "$tmp/tiny.db" "INSERT INTO measurement (run_id, backend, world_size, iters, warmup, seconds,
                    status) VALUES (1, 'mpi', 2, 5, 1, 1e-300, 'ok')"
"$REFIT" calibrate --db "$tmp/tiny.db" --cluster localhost --out "$tmp/tiny.lua" >"$tmp/out" \
    2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/tiny.db: run 1: measurement 1: 1e-300 s is not a \
refit's time (refit takes 1e-06 to 1e+06 s); remove it (DELETE FROM measurement WHERE id = 1) \
or calibrate on another database" "a measurement of 1e-300 s: refused, naming database, run and row"
ok "$(test ! -e "$tmp/tiny.lua" && test ! -s "$tmp/out"; echo $?)" "and nothing written"

# A cluster file named by its user: the name holds a quote, "]]", a newline and "../".
# calibrate writes into the current folder, under a name taken from the --cluster argument
# alone, and quotes the name wherever it appears in the Lua it writes. The measurement is
# made up (1.37 x the prediction), which makes the fit deterministic and its knobs
# fractions that six digits cannot write.
evil_name='../../a"b]]c
d'
sed 's/name = "localhost"/name = "..\/..\/a\\"b]]c\\nd"/
     s/nvlink_efficiency = 1.0,/nvlink_efficiency = 1.0, nic_efficiency = 0.123456789012,/' \
    "$SRCDIR/models/clusters/localhost.lua" >"$tmp/evil.lua"
sed "s|system = \"localhost\"|system = \"$tmp/evil.lua\"|; s|\.\./exec/|$data/../exec/|" \
    "$data/llama-pair.lua" >"$tmp/evil-pair.lua"
edb=$tmp/evil.db
"$REFIT" sim "$tmp/evil-pair.lua" --db "$edb" --json >"$tmp/sim.json" 2>"$tmp/err"
ok $? "refit sim on a cluster whose name has a quote, ]], a newline and ../"
sed 's/^/# /' "$tmp/err"
is "$(sql "$edb" "SELECT DISTINCT cluster FROM prediction")" "$evil_name" \
    "and stores that name"
sql "$edb" "INSERT INTO measurement (run_id, backend, world_size, iters, warmup, seconds,
            status) SELECT run_id, 'mpi', 2, 5, 1, seconds * 1.37, 'ok' FROM prediction"
mkdir -p "$tmp/work/sub"
(cd "$tmp/work/sub" && "$REFIT" calibrate --db "$edb" --cluster "$tmp/evil.lua" --json \
    >"$tmp/evil.json" 2>"$tmp/err")
ok $? "refit calibrate fits that cluster"
sed 's/^/# /' "$tmp/err"
is "$(cd "$tmp" && find . -name '*calibrated*' | sort)" "./work/sub/evil-calibrated.lua" \
    "it writes <--cluster's file name>-calibrated.lua in the current folder, nowhere else"
is "$(json "$tmp/evil.json" '$.file')" "evil-calibrated.lua" "and says so"
ok "$(grep -q '^        nic_efficiency = 0.123456789012,$' "$tmp/work/sub/evil-calibrated.lua";
    echo $?)" "a kept knob is written as given, every digit"
sed 's/^/# /' "$tmp/work/sub/evil-calibrated.lua"
sed "s|$tmp/evil.lua|$tmp/work/sub/evil-calibrated.lua|" "$tmp/evil-pair.lua" >"$tmp/evil-again.lua"
"$REFIT" sim "$tmp/evil-again.lua" --db "$edb" --json >"$tmp/sim.json" 2>"$tmp/err"
ok $? "the calibrated file loads (the name's quote, newline and ]] stay inside the string)"
sed 's/^/# /' "$tmp/err"
id=$(json "$tmp/sim.json" '$.run_id')
is "$(sql "$edb" "SELECT cluster = '../../a\"b]]c' || char(10) || 'd-calibrated' FROM prediction
                  WHERE run_id = $id")" 1 "its cluster has exactly that name, -calibrated"
# Every knob reads back as the double calibrate fitted, so the file predicts calibrate's
# "after" to rounding: no knob sits a batching step away from it.
after=$(json "$tmp/evil.json" '$.points[0].after_s')
is "$(sql "$edb" "SELECT abs(seconds / $after - 1) < 1e-12 FROM prediction WHERE run_id = $id")" \
    1 "and predicts exactly the fitted time ($after s)"

# The output is never the database, nor its companions; a failure leaves no temp file.
before=$(sql "$edb" "SELECT count(*) FROM run")
for out in "$edb" "$tmp/./evil.db" "$edb-wal" "$edb-shm" "$edb-journal"; do
    "$REFIT" calibrate --db "$edb" --cluster "$tmp/evil.lua" --out "$out" >/dev/null 2>"$tmp/err"
    is "$? $(cat "$tmp/err")" "2 refit: --out $out: is the database --db $edb (or its -wal, \
-shm or -journal file); the calibrated cluster needs a file of its own" \
        "--out ${out#"$tmp"/} is refused"
done
is "$(sql "$edb" "SELECT count(*) FROM run")" "$before" "and the database is intact"
mkdir "$tmp/adir"
"$REFIT" calibrate --db "$edb" --cluster "$tmp/evil.lua" --out "$tmp/adir" >/dev/null \
    2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $tmp/adir: not a regular file (an output is replaced whole)" \
    "--out a folder: refused"
is "$(find "$tmp/adir" "$tmp" -mindepth 1 -maxdepth 1 -name '*.tmp*' | wc -l)" 0 "no temp file is left"
for spec in .. . .lua "$tmp/"; do
    "$REFIT" calibrate --db "$edb" --cluster "$spec" >/dev/null 2>"$tmp/err"
    is "$? $(cat "$tmp/err")" "2 refit: --cluster $spec: no file name to derive the output's \
from (give --out FILE)" "--cluster '$spec' without --out: refused"
done
REFIT_SIM_TOLERANCE=0.5 "$REFIT" calibrate --db "$edb" --cluster "$tmp/evil.lua" \
    --out "$tmp/t.lua" >/dev/null 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: REFIT_SIM_TOLERANCE=0.5: must be a number from 1e-12 to 0.01" \
    "calibrate range-checks the simulator's tolerance"
ok "$(test ! -e "$tmp/t.lua"; echo $?)" "and writes nothing"

if [ ! -x "$REFIT_EXEC" ] || ! command -v "$MPIRUN" >/dev/null 2>&1; then
    n=$((n + 1))
    echo "ok $n # SKIP refit-exec needs MPI (configure found none) and $MPIRUN"
    done_testing
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
over=
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then over=--oversubscribe; fi
# OpenMPI's own allocations in MPI_Init are never freed (see t/exec.sh).
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS

for scen in llama-pair llama-one-round qwen3-moe-broadcast; do
    "$REFIT" sim "$data/$scen.lua" --db "$db" --json >"$tmp/sim.json"
    ok $? "$scen: refit sim on localhost"
    id=$(json "$tmp/sim.json" '$.run_id')
    "$MPIRUN" $over -np 2 "$REFIT_EXEC" --db "$db" --run "$id" --backend mpi --check \
        --iters 5 --warmup 1 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    ok $rc "$scen: refit-exec measures run $id on 2 ranks"
    [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
done

cd "$tmp" || exit 1
"$REFIT" calibrate --db "$db" --cluster localhost >"$tmp/out" 2>"$tmp/err"
ok $? "refit calibrate fits localhost to three measurements"
sed 's/^/# /' "$tmp/out" "$tmp/err"
is "$(grep -c '^[0-9]' "$tmp/out")" 3 "one row per measurement"
ok "$(test -s localhost-calibrated.lua; echo $?)" "writes localhost-calibrated.lua by default"
# The fit minimises the objective (totals and rounds) and keeps the defaults unless it
# improves; the RMS of totals alone may move either way on measurements this noisy.
obj=$(sed -n 's/^objective.*: before \([0-9.]*\), after \([0-9.]*\).*/\1 \2/p' "$tmp/out")
ok "$(echo "$obj" | awk 'NF == 2 { exit !($2 < $1) } NF != 2 { exit 1 }'; echo $?)" \
    "the fit lowers its objective ($obj)"
rms=$(sed -n 's/^rms relative error of totals: before \([0-9.]*\), after \([0-9.]*\).*/\1 \2/p' \
    "$tmp/out")
ok "$(grep -q '^nvlink_efficiency ' "$tmp/out" &&
    grep -q '^nic_efficiency .*not identifiable' "$tmp/out"; echo $?)" \
    "nvlink_efficiency fitted; nic_efficiency not identifiable without NICs"
ok "$(grep -q '^-- .*run(s) 2 3 4' localhost-calibrated.lua; echo $?)" \
    "the file says which runs it was fitted to"
"$REFIT" calibrate --db "$db" --cluster localhost --out "$tmp/j.lua" --json >"$tmp/cal.json"
ok $? "calibrate --json"
is "$("$SQLITE3" :memory: "SELECT j->>'measurements' || ' ' || json_array_length(j, '$.points')
     || ' ' || (j->>'file') FROM (SELECT readfile('$tmp/cal.json') AS j)")" "3 3 $tmp/j.lua" \
    "the JSON lists every measurement and the file"
is "$("$SQLITE3" :memory: "SELECT printf('%.4f %.4f', j->>'rms_before', j->>'rms_after')
     FROM (SELECT readfile('$tmp/cal.json') AS j)")" "$rms" \
    "with the errors the table printed"
is "$(json "$tmp/cal.json" '$.parameters.nvlink_efficiency.identifiable') \
$(json "$tmp/cal.json" '$.parameters.nic_efficiency.identifiable')" "1 0" \
    "and which knobs the data could identify"

# The calibrated file is a cluster: a scenario names it, and its prediction of the first
# case is calibrate's "after" for that run, read at full precision from --json; the
# knobs it wrote read back exactly, so the two agree to rounding.
cat >"$tmp/pair.lua" <<LUA
return {
    model = "$SRCDIR/t/data/exec/tiny-llama.lua",
    cluster = { system = "j.lua" },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 1,
    strategy = "reshard",
}
LUA
"$REFIT" sim "$tmp/pair.lua" --db "$db" --json >"$tmp/sim.json" 2>"$tmp/err"
ok $? "refit sim loads the calibrated cluster file"
sed 's/^/# /' "$tmp/err"
id=$(json "$tmp/sim.json" '$.run_id')
after=$("$SQLITE3" :memory: "SELECT p.value->>'after_s' FROM
    json_each(readfile('$tmp/cal.json'), '$.points') AS p WHERE p.value->>'run_id' = 2")
is "$(sql "$db" "SELECT cluster, abs(seconds / $after - 1) < 1e-12 FROM prediction
                 WHERE run_id = $id")" "localhost-calibrated|1" \
    "it predicts the calibrated time ($after s)"

"$REFIT" calibrate --db "$db" --cluster "$tmp/localhost-calibrated.lua" --out "$tmp/again.lua" \
    >"$tmp/out" 2>"$tmp/err"
is "$? $(cat "$tmp/err")" "1 refit: $db: no usable measurement: no run predicted on cluster \
'localhost-calibrated' (refit sim) has an ok measurement (refit-exec --check, or refit measure)" \
    "a cluster file by path: only its own runs count"
done_testing
