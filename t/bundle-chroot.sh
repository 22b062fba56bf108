#!/bin/sh
# shellcheck disable=SC2016 # the commands given to inroot are quoted to expand in the root's shell
# The GPU bundle (scripts/gpu-bundle) in bare root filesystems, as on a GPU machine where
# nothing is installed: Debian 12 minbase (glibc 2.36) with NCCL only as a copy of
# libnccl.so.2 in /usr/local/cuda/lib64, and Debian 11 minbase (glibc 2.31, older than the
# bundle needs). In each, every bundled ELF resolves its libraries but the driver, refit plans
# a tiny DeepSeek-V3 and the bundle's mpirun replays it on 2 host ranks with
# `refit-exec --backend mpi --check`, natively and through the bundled loader; env.sh finds
# NCCL in the order it documents. Run from the source tree after scripts/gpu-bundle:
#
#   t/bundle-chroot.sh          the bundle in build/bundle (BUNDLE=DIR for another)
#
# It needs root (chroot, mounts), debootstrap and Debian's mirror (BUNDLE_CHROOT_MIRROR,
# default the one apt uses here) the first time: each root is cached as a tarball in
# build/bundle-chroot (BUNDLE_CHROOT_CACHE), so reruns take seconds. Skips, saying why,
# without them. Not part of `make check` (.ci/run runs it).
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SRCDIR/t/lib.sh"
bundle=${BUNDLE:-$SRCDIR/build/bundle}
cache=${BUNDLE_CHROOT_CACHE:-$SRCDIR/build/bundle-chroot}
mirror=${BUNDLE_CHROOT_MIRROR:-http://deb.debian.org/debian}
nccl=
for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" "${CUDA_HOME:-/usr/local/cuda}/lib"; do
    if [ -f "$d/libnccl.so.2" ]; then nccl=$d/libnccl.so.2; break; fi
done

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (chroot and mounts)"
command -v debootstrap >/dev/null 2>&1 || skip "no debootstrap (Debian: debootstrap)"
{ [ -f "$bundle/env.sh" ] && [ -f "$bundle/lib/bundle.sh" ]; } || skip "no bundle in $bundle: run scripts/gpu-bundle"
[ -n "$nccl" ] || skip "no libnccl.so.2 in the CUDA prefix to put in the root (CUDA_HOME)"
mkdir -p "$cache" || exit 1
cache=$(cd "$cache" && pwd)
bundle=$(cd "$bundle" && pwd)
roots=

# Mounts are fresh instances (proc, sysfs, tmpfs), never binds of the host's, and the root is
# removed with --one-file-system after they are gone: a slip cannot reach the host's files.
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    for r in $roots; do
        for m in dev/shm sys proc; do
            if mountpoint -q "$r/$m" 2>/dev/null; then umount "$r/$m" 2>/dev/null || umount -l "$r/$m"; fi
        done
        rm -rf --one-file-system "$r"
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

# tarball SUITE [INCLUDE]: the cached tarball of a Debian SUITE minbase root (plus the
# packages INCLUDE, in its name), made by debootstrap the first time; 1 when the mirror cannot
# be reached. Both are made before any test runs.
tarball() {
    t=$cache/$1-minbase${2:+-$2}.tar
    [ ! -f "$t" ] || return 0
    if command -v wget >/dev/null 2>&1; then
        wget -q -T 20 -t 1 -O /dev/null "$mirror/dists/$1/Release" 2>/dev/null || return 1
    fi
    rm -rf --one-file-system "$cache/$1.new"
    debootstrap --variant=minbase ${2:+--include="$2"} "$1" "$cache/$1.new" "$mirror" \
        >"$cache/$1-debootstrap.log" 2>&1 || {
        echo "Bail out! debootstrap $1 failed (see $cache/$1-debootstrap.log)"
        exit 1
    }
    tar -C "$cache/$1.new" -cf "$t.part" . && mv "$t.part" "$t"
    rm -rf --one-file-system "$cache/$1.new"
}
tarball bookworm python3-minimal || skip "no network to $mirror (debootstrap of bookworm)"
old_glibc=yes
tarball bullseye || old_glibc="no network to $mirror (debootstrap of bullseye)"

# root SUITE [INCLUDE]: a fresh root from SUITE's tarball in $cache/SUITE, its path in $root, with the
# bundle in /work/repo/build/bundle and NCCL in /usr/local/cuda/lib64.
root() {
    root=$cache/$1
    tarball=$cache/$1-minbase${2:+-$2}.tar
    roots="$roots $root"
    rm -rf --one-file-system "$root"
    { mkdir -p "$root" && tar -C "$root" -xf "$tarball"; } || {
        echo "Bail out! cannot unpack $tarball"
        exit 1
    }
    { mount -t proc proc "$root/proc" && mount -t sysfs sysfs "$root/sys" &&
        mkdir -p "$root/dev/shm" && mount -t tmpfs -o size=1g tmpfs "$root/dev/shm"; } || {
        echo "Bail out! cannot mount proc, sysfs and /dev/shm in $root"
        exit 1
    }
    # The device runs from its copy of the repository: the bundle is build/bundle there.
    mkdir -p "$root/work/repo/build" "$root/usr/local/cuda/lib64"
    cp -a "$bundle" "$root/work/repo/build/bundle"
    ln "$nccl" "$root/usr/local/cuda/lib64/libnccl.so.2" 2>/dev/null ||
        cp "$nccl" "$root/usr/local/cuda/lib64/libnccl.so.2"
    # A 2-rank scenario on the tiny DeepSeek-V3 (t/data/exec/tiny-dsv3.lua): training EP2 to
    # inference TP2, colocated on GPUs 0 and 1.
    cat >"$root/work/repo/tiny2.lua" <<'EOF'
return {
    model = "build/bundle/scenarios/tiny-dsv3.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, ep = 2 },
    infer = { gpus = 2, tp = 2 },
    staging_mb = 1,
    strategy = "reshard",
}
EOF
}
# inroot CMD: CMD under /bin/sh in the root, in /work/repo, with a machine's bare environment.
inroot() {
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        TERM=dumb LANG=C chroot "$root" /bin/sh -c "cd /work/repo && $1"
}
# ldd_all: every bundled ELF whose libraries do not all resolve (the driver aside), natively
# (lib/ and NCCL's folder on LD_LIBRARY_PATH) or, with "loader", by the bundled loader.
ldd_all() {
    inroot '
b=build/bundle
for f in $b/libexec/* $b/lib/*.so* $b/lib/glibc/*.so* $b/lib/openmpi/*.so $b/lib/pmix/*.so; do
    if [ "'"${1:-}"'" = loader ]; then
        out=$($b/lib/glibc/ld-linux-x86-64.so.2 --library-path $b/lib/glibc:$b/lib:/usr/local/cuda/lib64 --list "$f" 2>&1)
    else
        out=$(LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64 ldd "$f" 2>&1)
    fi
    bad=$(echo "$out" | grep -E "not found|version .* not found|No such file" | grep -vE "libcuda\\.|libnvidia-")
    [ -z "$bad" ] || echo "${f#$b/}: $bad"
done'
}
# replay NAME PREFIX: plan tiny2.lua and replay it on 2 ranks; PREFIX runs before (sourcing
# env.sh, setting REFIT_BUNDLE_LOADER); the last command's status, refit-exec's in $NAME.json.
replay() {
    inroot "$2
refit=\${REFIT:-build/bundle/bin/refit}
mpirun=\${MPIRUN:-build/bundle/bin/mpirun}
exe=\${REFIT_EXEC:-build/bundle/bin/refit-exec}
rm -f $1.db
\$refit plan tiny2.lua --db $1.db --json >$1-plan.json 2>$1.err || exit 1
\$mpirun --oversubscribe --bind-to none -np 2 \$exe --db $1.db --run 1 --backend mpi --check --json \
    >$1.json 2>>$1.err"
}
# is_ok NAME DESCRIPTION: the replay NAME ended with status ok (else its stderr is shown).
is_ok() {
    s=$(sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p' "$root/work/repo/$1.json" 2>/dev/null | head -1)
    is "$s" ok "$2"
    [ "$s" = ok ] || head -c 1500 "$root/work/repo/$1.err" 2>/dev/null | sed 's/^/#   /'
}
# libc_of PREFIX: the libc.so.6 that refit starts with, by the loader's own report (the lines
# of the process that initialises libexec/refit, not of the wrapper's shell).
libc_of() {
    inroot "$1 LD_DEBUG=libs build/bundle/bin/refit --help 2>&1 >/dev/null" | awk '
        $2 == "calling" && $4 ~ /libc\.so\.6$/ { libc[$1] = $4 }
        $2 == "initialize" && $4 ~ /libexec\/refit$/ { print libc[$1]; exit }'
}

# --- Debian 12: the bundle's own glibc, NCCL as the CUDA prefix's copy.
root bookworm python3-minimal
is "$(ldd_all)" "" "bookworm: every bundled ELF resolves its libraries natively (the driver aside)"
is "$(ldd_all loader)" "" "bookworm: ... and through the bundled loader"
is "$(inroot '. build/bundle/env.sh && echo "$REFIT_NCCL_SOURCE $REFIT_NCCL_LIB"')" \
    "cuda /usr/local/cuda/lib64/libnccl.so.2" "bookworm: env.sh finds NCCL in the CUDA prefix"
is "$(inroot '. build/bundle/env.sh && echo "$LD_LIBRARY_PATH"')" "/usr/local/cuda/lib64" \
    "bookworm: env.sh puts NCCL's folder, and only it, on LD_LIBRARY_PATH"
is "$(inroot '. build/bundle/env.sh && build/bundle/bin/ompi_info --path all' | sed -n 's/^ *Pkglibdir: //p' | head -1)" \
    "/work/repo/build/bundle/lib/openmpi" "bookworm: Open MPI is relocated to the bundle (ompi_info --path)"
is "$(libc_of '')" "/lib/x86_64-linux-gnu/libc.so.6" "bookworm: glibc 2.36 is new enough: refit runs on the system's glibc"
is "$(libc_of 'REFIT_BUNDLE_LOADER=1')" "/work/repo/build/bundle/lib/glibc/libc.so.6" \
    "bookworm: REFIT_BUNDLE_LOADER=1 runs it on the bundled glibc"

replay native '. build/bundle/env.sh
REFIT=build/bundle/bin/refit MPIRUN=build/bundle/bin/mpirun REFIT_EXEC=build/bundle/bin/refit-exec'
ok $? "bookworm: env.sh, refit plan, the bundle's mpirun -np 2 refit-exec --backend mpi --check (relative paths)"
is_ok native "bookworm: the replay's status is ok"
replay loader 'export REFIT_BUNDLE_LOADER=1; . /work/repo/build/bundle/env.sh'
ok $? "bookworm: the same through the bundled loader (REFIT_BUNDLE_LOADER=1; absolute paths, from env.sh)"
is_ok loader "bookworm: through the loader, status ok"
replay bare 'export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1'
ok $? "bookworm: without env.sh, the wrappers alone (refit-exec finds NCCL, refit the bundle's models)"
is_ok bare "bookworm: without env.sh, status ok"

# NCCL's sources in order: the system loader's, the CUDA prefix's, the Python wheel's.
src_of() { inroot ". build/bundle/env.sh && echo \"\$REFIT_NCCL_SOURCE \$REFIT_NCCL_LIB\" && build/bundle/bin/refit-exec --help >/dev/null && echo loads"; }
site=$root/usr/lib/python3/dist-packages/nvidia/nccl/lib
mkdir -p "$site" && mv "$root/usr/local/cuda/lib64/libnccl.so.2" "$site/"
is "$(src_of | tr '\n' ' ')" "wheel /usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2 loads " \
    "env.sh finds the wheel's NCCL (nvidia.nccl a namespace package) and refit-exec loads it"
cp "$site/libnccl.so.2" "$root/usr/local/cuda/lib64/" && ln "$site/libnccl.so.2" "$root/usr/lib/x86_64-linux-gnu/libnccl.so.2" &&
    inroot ldconfig
is "$(src_of | tr '\n' ' ')" "system /lib/x86_64-linux-gnu/libnccl.so.2 loads " \
    "the system loader's NCCL comes before the CUDA prefix's and the wheel's"
rm -f "$root/usr/lib/x86_64-linux-gnu/libnccl.so.2" "$root/usr/local/cuda/lib64/libnccl.so.2" "$site/libnccl.so.2" &&
    inroot ldconfig
is "$(inroot '. build/bundle/env.sh && echo "$REFIT_NCCL_SOURCE:$REFIT_NCCL_LIB:" && build/bundle/bin/refit --help >/dev/null && echo refit-runs')" \
    "none::
refit-runs" "without NCCL: REFIT_NCCL_SOURCE=none, REFIT_NCCL_LIB empty, refit still runs"

# --- Debian 11: glibc 2.31 is older than the bundle needs; the wrappers take the loader.
if [ "$old_glibc" != yes ]; then
    for _ in 1 2 3 4 5; do
        n=$((n + 1))
        echo "ok $n # SKIP $old_glibc"
    done
    done_testing
fi
root bullseye
is "$(inroot '. build/bundle/env.sh && echo "$REFIT_NCCL_SOURCE"')" cuda "bullseye: env.sh finds NCCL in the CUDA prefix"
is "$(libc_of '')" "/work/repo/build/bundle/lib/glibc/libc.so.6" \
    "bullseye: glibc 2.31 is too old: refit runs on the bundled glibc unasked"
replay old '. build/bundle/env.sh'
ok $? "bullseye: the bundle's mpirun -np 2 refit-exec --backend mpi --check"
is_ok old "bullseye: the replay's status is ok"
inroot 'REFIT_BUNDLE_LOADER=0 build/bundle/bin/refit --help' >/dev/null 2>"$tmp/native.err"
ok "$(grep -q "GLIBC_2\.3[2-9]' not found" "$tmp/native.err"; echo $?)" \
    "bullseye: forced native (REFIT_BUNDLE_LOADER=0) fails for want of a newer glibc, as the wrappers expect"
done_testing
