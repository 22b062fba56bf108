#!/bin/sh
# End to end: `make install` into a staged prefix other than the configured one (DESTDIR
# and prefix on the command line, as a package build does) gives a refit that, run from
# another folder with REFIT_MODELS unset, finds the installed models relative to its own
# binary (../share/refit/models), and the installed scenarios and studies run.
. "${SRCDIR:-.}/t/lib.sh"
build=$(dirname "$REFIT")
dest=$tmp/d
prefix=/opt/refit-x
root=$dest$prefix
# The parent make's jobserver does not reach this one; it runs on its own, quietly.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -s -C "$build" install \
    DESTDIR="$dest" prefix="$prefix" >"$tmp/install.log" 2>&1
rc=$?
ok "$rc" "make install DESTDIR=\$tmp/d prefix=$prefix"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/install.log"
ok "$(test -x "$root/bin/refit"; echo $?)" "the binary is installed in $prefix/bin"
ok "$(test -f "$root/share/refit/models/lib/refit.lua"; echo $?)" \
    "the models are installed in $prefix/share/refit/models"
is "$(cd "$root/share/refit/scenarios" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')" \
    "dsv3-gb200-relay.lua dsv3-gb200.lua dsv3-h100.lua kimi-k3-bench.lua kimi-k3-gb200.lua \
kimi-k3-h100-ep64.lua perplexity-kimi-k2-h100.lua qwen3-235b-gb200.lua qwen3-235b-h100.lua " \
    "the shipped scenarios are installed in share/refit/scenarios"
is "$(cd "$root/share/refit/studies" && find . -name 'study-*' | sed 's|^\./||' | sort |
    tr '\n' ' ')" \
    "study-fp8.lua study-k3-5s.lua study-nemo-rl.lua study-oversubscription.lua \
study-strategies.lua " "the shipped studies are installed in share/refit/studies"
is "$(readlink "$root/share/refit/studies/dsv3-h100.lua")" "../scenarios/dsv3-h100.lua" \
    "beside them, links to the scenarios they name"

# A model only the installed copy has: listed only when refit reads that copy (the source
# tree's models, which this build could fall back to, do not have it).
sed 's/name = "llama3-8b"/name = "installed-only"/' "$root/share/refit/models/llama3-8b.lua" \
    >"$root/share/refit/models/installed-only.lua"
(cd /tmp && env -u REFIT_MODELS "$root/bin/refit" models) >"$tmp/models" 2>&1
ok $? "refit models from /tmp without REFIT_MODELS"
is "$(awk '$1 == "deepseek-v3" || $1 == "installed-only" { print $1 }' "$tmp/models" |
    tr '\n' ' ')" "deepseek-v3 installed-only " \
    "it lists deepseek-v3, and the model only the installed copy has"

# An installed scenario, planned from another folder; and one through a study's link.
(cd /tmp && env -u REFIT_MODELS "$root/bin/refit" plan \
    "$root/share/refit/scenarios/dsv3-h100.lua" --db "$tmp/i.db" --json) >"$tmp/plan.json"
ok $? "refit plan of the installed dsv3-h100.lua"
is "$(json "$tmp/plan.json" '$.model')" "deepseek-v3" "it plans DeepSeek-V3"
(cd /tmp && env -u REFIT_MODELS "$root/bin/refit" plan \
    "$root/share/refit/studies/dsv3-h100.lua" --db "$tmp/i.db" >/dev/null)
ok $? "the same scenario through the studies/ link"
is "$(sql "$tmp/i.db" "SELECT count(*) || ' ' || min(model) FROM run")" "2 deepseek-v3" \
    "both runs are stored"

env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -s -C "$build" uninstall \
    DESTDIR="$dest" prefix="$prefix" >"$tmp/uninstall.log" 2>&1
ok $? "make uninstall"
rm -f "$root/share/refit/models/installed-only.lua"
is "$(find "$dest" -type f -o -type l | wc -l | tr -d ' ')" 0 "uninstall leaves no file or link"
done_testing
