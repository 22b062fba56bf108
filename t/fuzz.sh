#!/bin/sh
# The fuzz targets' entry function (t/fuzz/target.c), built with the normal compiler, replays
# the seed corpus and every saved finding (t/data/bad/fuzz/KIND/): each input loads, or
# fails with one line that names a file; none crashes (a finding aborts the replay).
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data
y=$data/yaml
for kind in scenario config cluster yaml framework; do
    case $kind in
    scenario) seeds="$data/good $data/bad $data/sim" ;;
    config) seeds=$(ls "$data"/hf/*/config.json) ;;
    cluster) seeds="$SRCDIR/models/clusters $data/good $data/bad" ;;
    yaml) seeds="$y $y/hydra $y/hydra/actor $y/hydra/engine $y/hydra/model $y/hydra/rollout
        $y/recipe/config $data/bad/yaml" ;;
    framework) seeds="$SRCDIR/models/frameworks $data/framework" ;;
    esac
    [ -d "$data/bad/fuzz/$kind" ] && seeds="$seeds $data/bad/fuzz/$kind"
    # shellcheck disable=SC2086
    "$FUZZ_REPLAY/replay-$kind" $seeds >"$tmp/out" 2>"$tmp/err"
    st=$?
    [ $st -ne 0 ] && sed 's/^/# /' "$tmp/err"
    ok $st "fuzz target $kind: the seeds and saved findings load or fail cleanly"
    ok "$(grep -q '^replayed [1-9][0-9]* inputs$' "$tmp/out"; echo $?)" \
        "fuzz target $kind: $(cat "$tmp/out")"
done
done_testing
