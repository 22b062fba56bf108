#!/bin/sh
# configure --with-nccl=DIR on the layouts NCCL ships in: the Python wheel (include/nccl.h and
# lib/libnccl.so.2, no libnccl.so), NVIDIA's tarball (lib/ with libnccl.so), a header older
# than 2.18 and a folder without the library. The wheel layout is built for real: refit-exec
# must load libnccl.so.2 from that folder. It configures and builds, so it is not part of
# `make check`; .ci/run runs it from the source tree:
#
#   t/nccl-layout.sh            NCCL from /usr/local/cuda (REFIT_TEST_NCCL=DIR for another)
#
# The folders are symbolic links to the installed NCCL; builds go to build/nccl-layout
# (NCCL_LAYOUT_BUILD), made afresh each run.
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$SRCDIR/t/lib.sh"
nccl=${REFIT_TEST_NCCL:-/usr/local/cuda}
cuda=${CUDA_HOME:-/usr/local/cuda}
work=${NCCL_LAYOUT_BUILD:-$SRCDIR/build/nccl-layout}

lib=
for d in "$nccl/lib64" "$nccl/lib"; do
    if [ -f "$d/libnccl.so.2" ]; then lib=$d/libnccl.so.2; break; fi
done
if [ -z "$lib" ] || [ ! -f "$nccl/include/nccl.h" ]; then
    echo "1..0 # SKIP no NCCL in $nccl (include/nccl.h, lib64 or lib/libnccl.so.2)"
    exit 0
fi
if [ ! -f "$cuda/include/cuda_runtime.h" ]; then
    echo "1..0 # SKIP no CUDA toolkit in $cuda (NCCL needs its runtime)"
    exit 0
fi
if [ ! -x "$SRCDIR/configure" ]; then
    (cd "$SRCDIR" && ./bootstrap) >/dev/null 2>&1 || {
        echo "1..0 # SKIP ./bootstrap failed (autoconf, automake)"
        exit 0
    }
fi
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
want_version=$(sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$nccl/include/nccl.h" |
    paste -sd. -)

# layout NAME HEADER [LIBRARY-FILE...]: a folder with include/nccl.h and lib/ holding links
# named like the given files, all to the installed library.
layout() {
    dir=$work/$1
    hdr=$2
    shift 2
    mkdir -p "$dir/include" "$dir/lib"
    ln -s "$hdr" "$dir/include/nccl.h"
    for f in "$@"; do ln -s "$lib" "$dir/lib/$f"; done
}
# conf NAME: configure a fresh build folder against the layout NAME, output in NAME.out.
conf() {
    mkdir -p "$work/build-$1"
    (cd "$work/build-$1" && "$SRCDIR/configure" --with-cuda="$cuda" --with-nccl="$work/$1") \
        >"$work/$1.out" 2>&1
}
mkvar() { sed -n "s/^$1 = //p" "$work/build-$2/Makefile"; }

# 1. The wheel: lib/libnccl.so.2 alone.
layout wheel "$nccl/include/nccl.h" libnccl.so.2
conf wheel
ok $? "configure --with-nccl on the wheel layout (lib/libnccl.so.2, no libnccl.so)"
ok "$(grep -Eq "NCCL backend +yes +$work/wheel/lib \\(NCCL $want_version\\)" "$work/wheel.out"; echo $?)" \
    "the summary names the wheel's lib folder and NCCL $want_version"
is "$(mkvar NCCL_LIBS wheel)" "-L$work/wheel/lib -Wl,-rpath,$work/wheel/lib -l:libnccl.so.2" \
    "NCCL_LIBS links the library by file name and rpaths its folder"
(cd "$work/build-wheel" && nice make -j"$(nproc)" exec/refit-exec) >"$work/wheel-make.out" 2>&1
ok $? "refit-exec builds against the wheel layout (see $work/wheel-make.out)"
exe=$work/build-wheel/exec/refit-exec
ok "$(readelf -d "$exe" 2>/dev/null | grep -q 'NEEDED.*\[libnccl\.so\.2\]'; echo $?)" \
    "refit-exec needs libnccl.so.2"
runpath=$(readelf -d "$exe" 2>/dev/null | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
is "${runpath%%:*}" "$work/wheel/lib" "the wheel's lib folder comes first in refit-exec's runpath"
is "$(ldd "$exe" 2>/dev/null | sed -n 's/^[[:space:]]*libnccl\.so\.2 => \([^ ]*\).*/\1/p')" \
    "$work/wheel/lib/libnccl.so.2" "the loader takes libnccl.so.2 from the wheel's lib folder"

# 2. NVIDIA's tarball: lib/ with the development link, so -lnccl.
layout tarball "$nccl/include/nccl.h" libnccl.so libnccl.so.2
conf tarball
ok $? "configure --with-nccl on the tarball layout (lib/libnccl.so)"
is "$(mkvar NCCL_LIBS tarball)" "-L$work/tarball/lib -Wl,-rpath,$work/tarball/lib -lnccl" \
    "NCCL_LIBS links -lnccl from the tarball's lib folder"

# 3. A header older than 2.18 (no ncclCommSplit) is refused, naming the version.
mkdir -p "$work/hdr217"
sed -e 's/^#define NCCL_MINOR .*/#define NCCL_MINOR 17/' -e 's/^#define NCCL_PATCH .*/#define NCCL_PATCH 3/' \
    -e 's/^#define NCCL_VERSION_CODE .*/#define NCCL_VERSION_CODE 21703/' \
    "$nccl/include/nccl.h" >"$work/hdr217/nccl.h"
layout old "$work/hdr217/nccl.h" libnccl.so.2
! conf old
ok $? "configure --with-nccl fails on NCCL 2.17"
ok "$(grep -q "error: --with-nccl given but NCCL cannot be used: NCCL 2.17.3 in $work/old is too old: refit-exec needs 2.18 or newer" \
    "$work/old.out"; echo $?)" "the error names the version found and the one needed"

# 4. A folder with the header and no library.
layout nolib "$nccl/include/nccl.h"
! conf nolib
ok $? "configure --with-nccl fails on a folder without the library"
ok "$(grep -q "no libnccl.so or libnccl.so.2 in $work/nolib/lib64 or $work/nolib/lib" "$work/nolib.out"; echo $?)" \
    "the error names the folders searched"
done_testing
