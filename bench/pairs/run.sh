#!/usr/bin/env bash
# Two builds of the library in one process, decodes alternating in pairs:
# the A/B for changes worth a few per cent, which rounds of separate
# processes (bench/ab.py) cannot see on a VM whose vCPUs change speed.
#
#   bench/pairs/run.sh OLD_BUILD [NEW_BUILD] -- [pairs options] FILE...
#
# OLD_BUILD and NEW_BUILD are Release build folders holding librscflight.a
# (NEW_BUILD defaults to build-release). OLD's archive is copied with every
# symbol the library defines renamed old_<name> (objcopy), then pairs.c is
# linked against both. pairs.c says what it prints. Build an old commit
# with:
#   git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build-release \
#     -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/old/build-release --target rscflight_static
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
old=${1:?usage: run.sh OLD_BUILD [NEW_BUILD] -- [options] FILE...}
shift
new=$root/build-release
if [ $# -gt 0 ] && [ "$1" != "--" ]; then new=$1; shift; fi
[ "${1:-}" = "--" ] && shift
for b in "$old" "$new"; do
  [ -f "$b/librscflight.a" ] || { echo "run.sh: no $b/librscflight.a" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The library's own symbols (rsc_*, rsc__*) are renamed; what it uses from
# simdjson and libc, and the C++ runtime's shared weak symbols, are not.
nm -g --defined-only "$old/librscflight.a" 2>/dev/null |
  awk 'NF == 3 && $3 ~ /^rsc/ { print $3 " old_" $3 }' | sort -u >"$work/rename"
objcopy --redefine-syms="$work/rename" "$old/librscflight.a" "$work/libold.a"
cc -O2 -std=c11 -I"$root/include" -I"$new/include" "$here/pairs.c" "$work/libold.a" \
  "$new/librscflight.a" $(pkg-config --libs simdjson 2>/dev/null || echo -lsimdjson) \
  -lutf8proc -ldouble-conversion -lstdc++ -lm -o "$work/pairs"
"$work/pairs" "$@"
