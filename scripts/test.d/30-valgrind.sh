#!/usr/bin/env bash
# valgrind memcheck, zero errors and zero leaks or the script fails:
#  * the library over every fixture, fixtures/**/*.rsc: decode fed in
#    pieces, the canonical dump, and the round trip through rsc_encode
#    (build/tests/memcheck_each, one process per core for all of them: a
#    valgrind start costs more than most fixtures' decode); its per-file
#    statuses and byte counts must equal those of the same run without
#    valgrind;
#  * the CLI (build/rscflight) on each of its commands over a sample: a
#    production and a development payload, a refused one, a page, stdin.
#
# valgrind's own error status is 99 here, not 1: 1 is the CLI's "input
# refused" status, which some fixtures are meant to give. Each CLI run must
# exit as the same run without valgrind does.
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=build/rscflight
each=build/tests/memcheck_each
for bin in "$cli" "$each"; do
  [ -x "$bin" ] || { echo "30-valgrind: $bin is missing (scripts/test builds it)" >&2; exit 1; }
done
logs=build/valgrind
rm -rf "$logs"
mkdir -p "$logs"
vg=(valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full
  --errors-for-leak-kinds=definite,indirect,possible --track-origins=no)

# --- the library over every fixture
find fixtures -name '*.rsc' -not -path '*/node_modules/*' | LC_ALL=C sort >"$logs/all.txt"
count=$(wc -l <"$logs/all.txt")
"$each" $(cat "$logs/all.txt") >"$logs/expected.txt"
split -n l/"$(nproc)" -d "$logs/all.txt" "$logs/part."
pids=()
for part in "$logs"/part.*; do
  xargs "${vg[@]}" --log-file="$part.log" "$each" <"$part" >"$part.out" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
for part in "$logs"/part.*[0-9]; do
  if [ -s "$part.log" ]; then
    cat "$part.log" >&2
    failed=1
  fi
done
cat "$logs"/part.*[0-9].out >"$logs/valgrind.txt"
if ! diff -u "$logs/expected.txt" "$logs/valgrind.txt" >&2; then
  echo "valgrind: memcheck_each gave other results under valgrind" >&2
  failed=1
fi
[ "$failed" = 0 ] || { echo "valgrind: the library over the fixtures failed" >&2; exit 1; }
echo "valgrind memcheck (library: decode, dump, encode): $count fixtures, 0 errors, 0 leaks"

# --- the CLI
check_cli() { # check_cli NAME STDIN ARGS...: NAME names the log, STDIN a file or -
  local name=$1 input=$2 plain rc log
  shift 2
  [ "$input" = - ] && input=/dev/null
  log="$logs/cli-$name.log"
  set +e
  "$cli" "$@" <"$input" >/dev/null 2>&1
  plain=$?
  "${vg[@]}" --log-file="$log" "$cli" "$@" <"$input" >/dev/null 2>&1
  rc=$?
  set -e
  if [ "$rc" -ne "$plain" ] || [ -s "$log" ]; then
    echo "valgrind: rscflight $* (exit $rc, without valgrind $plain)" >&2
    cat "$log" >&2
    return 1
  fi
}
prod=fixtures/react/19.3.1/prod/ssr-dashboard.rsc
dev=fixtures/react/19.3.1/dev/errors-in-suspense.rsc
refused=fixtures/vectors/bigIdOverflow.prod.rsc
page=fixtures/html/next-turbopack-suspense.html
runs=0
for args in "dump $prod" "dump --dev $dev" "dump $refused" "dump $page" "dump --compact -" \
  "tree $prod" "tree $page" "stats $prod" "stats $page" "encode $prod" "encode --dev $dev" \
  "encode $refused" "extract $page" "bench --min-time 0 $prod"; do
  runs=$((runs + 1))
  input=-
  case "$args" in *" -") input=$prod ;; esac
  # shellcheck disable=SC2086 # args are words
  check_cli "$runs" "$input" $args
done
echo "valgrind memcheck (CLI): $runs runs, 0 errors, 0 leaks"
