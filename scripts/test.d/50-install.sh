#!/usr/bin/env bash
# Installs the build into a temporary prefix and uses it the way a consumer
# does:
#   - the shared library exports only rsc_* symbols (nm -D --defined-only),
#     and has its SONAME; headers, .pc file and CMake package are in place;
#   - examples/consumer, a tiny CMake project, finds the package with
#     find_package(rscflight) (CMAKE_PREFIX_PATH) and builds
#     examples/stream_render.c against rscflight::rscflight (shared) and
#     rscflight::rscflight_static (static);
#   - the same program is compiled with `pkg-config --cflags --libs
#     rscflight` (PKG_CONFIG_PATH), shared and static;
#   - each binary renders examples/shop.rsc as tests/golden expects.
# Usage: scripts/test.d/50-install.sh [BUILD_DIR]   (default: $BUILD_DIR or build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-${BUILD_DIR:-build}}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
golden=tests/golden/example-stream.shop.html
fail() { echo "50-install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
so=$(find "$prefix" -name 'librscflight.so' | head -n1)
[ -n "$so" ] || fail "librscflight.so not installed"
libdir=$(dirname "$so")
for f in include/rscflight.h include/rscflight_version.h bin/rscflight; do
  [ -e "$prefix/$f" ] || fail "$f not installed"
done
for f in librscflight.a pkgconfig/rscflight.pc cmake/rscflight/rscflightConfig.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done

# Exports: rsc_* (one underscore: rsc__* is internal) and the linker's own.
extra=$(nm -D --defined-only "$so" | awk '{print $NF}' |
        grep -Ev '^(rsc_[a-z0-9][A-Za-z0-9_]*|_init|_fini|_edata|_end|__bss_start)$' || true)
[ -z "$extra" ] || fail "librscflight.so exports more than rsc_*:"$'\n'"$extra"
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
major=$(sed -n 's/^#define RSC_VERSION_MAJOR \([0-9]*\)/\1/p' "$prefix/include/rscflight_version.h")
[ "$soname" = "librscflight.so.$major" ] || fail "SONAME is '$soname', want librscflight.so.$major"

export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion rscflight)
[ "$("$prefix/bin/rscflight" --version)" = "rscflight $version" ] || fail "CLI version is not $version"

# Runs a consumer binary on the example payload; it must print the golden output.
check() {
  "$1" examples/shop.rsc > "$tmp/out.html" || fail "$1 failed"
  cmp -s "$tmp/out.html" "$golden" || { diff -u "$golden" "$tmp/out.html" | head -20; fail "$1: output differs"; }
}
# A static link leaves no librscflight.so in the binary's NEEDED list.
check_static() {
  if readelf -d "$1" | grep -q 'librscflight\.so'; then fail "$1 needs librscflight.so"; fi
  check "$1"
}

# 1. CMake: find_package(rscflight) through CMAKE_PREFIX_PATH.
cmake -S examples/consumer -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/cmake" >/dev/null
check "$tmp/cmake/render_shared"
[ -x "$tmp/cmake/render_static" ] || fail "rscflight::rscflight_static was not found"
check_static "$tmp/cmake/render_static"

# 2. pkg-config: shared, then static (-Bstatic picks librscflight.a; the
#    --static flags add its private libraries).
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror examples/stream_render.c \
      $(pkg-config --cflags --libs rscflight) -Wl,-rpath,"$libdir" -o "$tmp/pc_shared"
check "$tmp/pc_shared"
libs=$(pkg-config --static --libs rscflight)
libs=${libs/-lrscflight/-Wl,-Bstatic -lrscflight -Wl,-Bdynamic}
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror examples/stream_render.c \
      $(pkg-config --cflags rscflight) $libs -o "$tmp/pc_static"
check_static "$tmp/pc_static"

echo "50-install: installed tree OK (rsc_* exports, $soname, find_package and pkg-config, shared and static)"
