#!/bin/sh
# The files the README, the docs and the studies use are in the tree the tests run from:
# under `make distcheck` that is the unpacked tarball, so a file left out of `make dist`
# fails here. Checks the quick start's package list, every path the README and
# doc/architecture.md name, every scenario, model and framework the scripts name, plans every
# shipped scenario and runs one study (scripts/study-nemo-rl.lua) from $SRCDIR/scripts.
. "${SRCDIR:-.}/t/lib.sh"
cd "$SRCDIR" || exit 1

# The quick start (README, scripts/quickstart) and CI install the packages in this list.
pk=scripts/debian-packages
for p in build-essential autoconf automake pkg-config liblua5.4-dev lua5.4 libsqlite3-dev \
    sqlite3 libjansson-dev libyaml-dev libcmocka-dev libopenmpi-dev openmpi-bin gnuplot-nox; do
    grep -qx "$p" "$pk" || echo "# $pk lacks $p"
done >"$tmp/pk"
is "$(test -f "$pk" && cat "$tmp/pk")" "" "$pk lists every package the build and the tests need"
ok "$(grep -q 'cat scripts/debian-packages' scripts/quickstart &&
      grep -q 'cat scripts/debian-packages' .ci/run; echo $?)" \
    "scripts/quickstart and .ci/run install from it"

# Every path README.md and doc/architecture.md name (a folder, a file or a glob) is in the
# tree. scripts/flowsim-bench is built by make; scripts/x.lua stands for any study.
grep -ohE '\b(scripts|models|doc)/[A-Za-z0-9_./*-]+' README.md doc/architecture.md |
    sed 's/[.,):]*$//' | sort -u >"$tmp/named"
while read -r f; do
    case $f in scripts/flowsim-bench | scripts/x.lua) continue ;; esac
    # shellcheck disable=SC2086 # a glob is expanded on purpose
    set -- $f
    [ -e "$1" ] || echo "$f"
done <"$tmp/named" >"$tmp/missing"
is "$(tr '\n' ' ' <"$tmp/missing")" "" \
    "every one of the $(wc -l <"$tmp/named" | tr -d ' ') paths the README and the docs name exists"

# Every scenario a study names, and every model and framework a script names.
grep -ohE 'refit\.scenario\("[^"]+"\)' scripts/*.lua | sed 's/.*("\(.*\)")/scripts\/\1/' >"$tmp/uses"
grep -ohE '\bmodel = "[^"./]+"' scripts/*.lua | sed 's/.*"\(.*\)"/models\/\1.lua/' >>"$tmp/uses"
grep -ohE '\bframework = "[^"]+"' scripts/*.lua models/*.lua 2>/dev/null |
    sed 's/.*"\(.*\)"/models\/frameworks\/\1.lua/' >>"$tmp/uses"
sort -u "$tmp/uses" | while read -r f; do [ -f "$f" ] || echo "$f"; done >"$tmp/missing"
is "$(tr '\n' ' ' <"$tmp/missing")" "" \
    "every scenario, model and framework the scripts name exists ($(sort -u "$tmp/uses" | wc -l | tr -d ' '))"
is "$(find models/frameworks -name '*.lua' | wc -l | tr -d ' ')" 7 \
    "the seven framework profiles (nemo-rl, verl, slime, miles, m2n, checkpoint-engine, perplexity)"

# The benchmark scripts are there and parse.
for f in scripts/bench scripts/bench-relay scripts/bench-search scripts/bench-sim \
    scripts/bench-study-mem scripts/bench-published; do
    ok "$(test -x "$f" && sh -n "$f"; echo $?)" "$f is an executable shell script"
done

# Every shipped scenario plans from the distributed tree.
for f in scripts/*.lua; do
    case $f in scripts/study-*) continue ;; esac
    # A profile with no broadcast path (Perplexity's) plans its own, point-to-point.
    s=broadcast
    grep -q 'framework = "perplexity"' "$f" && s=p2p
    "$REFIT" plan "$f" --strategy "$s" --db "$tmp/plans.db" >/dev/null 2>"$tmp/err"
    # A what-if scenario may warn that its layout overcommits the GPUs' memory.
    is "$? $(grep -v '^refit: warning: ' "$tmp/err")" "0 " "refit plan $f"
done

# A study, as the README runs it, from $SRCDIR/scripts: four layouts under NeMo RL's profile
# and without, two strategies each.
"$REFIT" run scripts/study-nemo-rl.lua --db "$tmp/study.db" >"$tmp/out" 2>"$tmp/err"
# (Its progress lines go to stderr; an error is a line "refit: ...".)
is "$? $(grep '^refit: ' "$tmp/err")" "0 " "refit run scripts/study-nemo-rl.lua"
is "$(grep -cE '^ *(dsv3|qwen3-235b)-(h100|gb200) ' "$tmp/out")" 4 "its table has a row per layout"
is "$(sql "$tmp/study.db" "SELECT count(*) FROM run JOIN prediction ON run_id = id
                          WHERE label LIKE 'study-nemo-rl %'")" 16 \
    "and it stored 16 predicted runs"
done_testing
