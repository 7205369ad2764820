#!/usr/bin/env bash
# Two builds of the library in one process, decodes alternating in pairs:
# the A/B for changes worth a few per cent, which rounds of separate
# processes (bench/run ab) cannot see on a VM whose vCPUs change speed.
#
#   bench/run pairs OLD_BUILD [NEW_BUILD] -- [pairs options] FILE...
#
# pairs options: --seconds S (per file and direction, default 5), --new (a
# decoder made and freed per decode), --borrow-input, --chunk-size N.
#
# OLD_BUILD and NEW_BUILD are Release build folders holding librscflight.a
# (NEW_BUILD defaults to build-release). One build's archive is copied with
# every symbol the library defines renamed old_<name> (objcopy) and linked
# beside the other into pairs.c, which says what it measures.
#
# Where a build sits in the process matters: the same archive against
# itself read 0.94x on the table page (code and data placement), as much
# as the changes this tool is for. So each file is measured twice, OLD in
# the renamed slot and then NEW in it; `forward` is time(OLD)/time(NEW)
# from the first, `swapped` the same from the second, and `speedup`
# their geometric mean, in which the slot's own bias cancels (`slot` is
# that bias: 1.000 when neither slot is favoured).
#
# What it cannot see: the allocator's state. The two builds share one heap,
# so a change in how much memory a decoder takes from libc and gives back
# (page faults of fresh decoders, --new) reads as no change here; compare
# such changes with a process per build (`rscflight bench` under
# `perf stat -e page-faults`, docs/performance.md, twelfth round).
# Build an old commit with:
#   git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build-release \
#     -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/old/build-release --target rscflight_static
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() { # the header comment above, up to `set`
  sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"
}
case ${1:-} in
  -h | --help) usage; exit 0 ;;
  '' | --) echo "usage: bench/run pairs OLD_BUILD [NEW_BUILD] -- [options] FILE..." >&2; exit 2 ;;
esac
old=$1
shift
new=$root/build-release
if [ $# -gt 0 ] && [ "$1" != "--" ]; then new=$1; shift; fi
[ "${1:-}" = "--" ] && shift
for b in "$old" "$new"; do
  [ -f "$b/librscflight.a" ] || { echo "bench/run pairs: no $b/librscflight.a" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pairs_NAME: the build RENAMED in the old_ slot, PLAIN linked as it is.
# The library's own symbols (rsc_*, rsc__*) are renamed; what it uses from
# simdjson and libc, and the C++ runtime's shared weak symbols, are not.
link() { # NAME RENAMED PLAIN
  nm -g --defined-only "$2/librscflight.a" 2>/dev/null |
    awk 'NF == 3 && $3 ~ /^rsc/ { print $3 " old_" $3 }' | sort -u >"$work/rename"
  objcopy --redefine-syms="$work/rename" "$2/librscflight.a" "$work/lib$1.a"
  cc -O2 -std=c11 -I"$root/include" -I"$3/include" "$here/pairs.c" "$work/lib$1.a" \
    "$3/librscflight.a" $(pkg-config --libs simdjson 2>/dev/null || echo -lsimdjson) \
    -lutf8proc -ldouble-conversion -lstdc++ -lm -o "$work/pairs_$1"
}
link forward "$old" "$new"
link swapped "$new" "$old"
opts=() files=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds | --chunk-size) opts+=("$1" "$2"); shift 2 ;;
    --*) opts+=("$1"); shift ;;
    *) files+=("$1"); shift ;;
  esac
done
printf '%-28s %7s %11s %11s %8s %8s %8s %8s\n' file pairs old new speedup forward swapped slot
for f in "${files[@]}"; do
  fw=$("$work/pairs_forward" "${opts[@]}" "$f")
  sw=$("$work/pairs_swapped" "${opts[@]}" "$f")
  # forward: OLD is "before"; swapped: NEW is "before", so its ratio is
  # time(NEW)/time(OLD) and the old-over-new ratio is its inverse.
  awk -F'\t' -v fw="$fw" -v sw="$sw" 'BEGIN {
    split(fw, a, "\t"); split(sw, b, "\t")
    f = a[5]; s = 1 / b[5]
    printf "%-28.28s %7d %8.1f us %8.1f us %7.3fx %7.3fx %7.3fx %7.3fx\n", a[1], a[2] + b[2],
      (a[3] + b[4]) / 2, (a[4] + b[3]) / 2, sqrt(f * s), f, s, sqrt(f / s)
  }'
done
