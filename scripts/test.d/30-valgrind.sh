#!/usr/bin/env bash
# valgrind memcheck over the CLI (build/rscflight dump, the RelWithDebInfo
# build scripts/test just made) on every fixture, fixtures/**/*.rsc, two at
# a time. Zero errors and zero leaks, or the script fails.
#
# valgrind's own error status is 99 here, not 1: 1 is the CLI's "input
# refused" status, which the fixtures of refused payloads (duplicate rows,
# bad ids...) are meant to give. Each run must also exit as the same run
# without valgrind does.
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=build/rscflight
[ -x "$cli" ] || { echo "30-valgrind: $cli is missing (scripts/test builds it)" >&2; exit 1; }
logs=build/valgrind
rm -rf "$logs"
mkdir -p "$logs"

check_one() {
  local f=$1 logs=$2 cli=$3 flags=() plain rc log
  case "$f" in */dev/*|*.dev.rsc) flags+=(--dev) ;; esac
  log="$logs/$(printf '%s' "$f" | tr '/ ' '__').log"
  set +e
  "$cli" dump "${flags[@]}" "$f" >/dev/null 2>&1
  plain=$?
  valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=no \
    --log-file="$log" "$cli" dump "${flags[@]}" "$f" >/dev/null 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne "$plain" ] || [ -s "$log" ]; then
    echo "valgrind: $f (exit $rc, without valgrind $plain)" >&2
    cat "$log" >&2
    return 1
  fi
  rm -f "$log"
}
export -f check_one

count=$(find fixtures -name '*.rsc' -not -path '*/node_modules/*' | wc -l)
find fixtures -name '*.rsc' -not -path '*/node_modules/*' -print0 |
  xargs -0 -P"$(nproc)" -I{} bash -c 'check_one "$1" "$2" "$3"' _ {} "$logs" "$cli"
echo "valgrind memcheck: $count fixtures, 0 errors, 0 leaks"
