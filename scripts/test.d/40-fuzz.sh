#!/usr/bin/env bash
# A short libFuzzer run of each harness (fuzz/; clang, ASan + UBSan):
# first every input that once crashed (fuzz/regressions), then the corpus
# long runs left, minimized (fuzz/replay.tar.xz), then RSC_FUZZ_SECONDS
# (default 20) of fuzzing per harness, two at a time, seeded from the
# fixtures and that corpus (and from fuzz/corpus-<harness> when a long run
# left one here). Any crash, sanitizer report, leak or timeout fails the script;
# the input is kept as build-fuzz/crash-<harness>-*. The long runs are in
# docs/hardening.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${RSC_FUZZ_SECONDS:-20}
jobs=$(nproc)
cmake -S . -B build-fuzz -DRSC_BUILD_FUZZ=ON -DRSC_BUILD_TESTS=OFF -DRSC_BUILD_PYTHON=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_frame fuzz_decode fuzz_walk fuzz_write fuzz_html >/dev/null
python3 fuzz/make-seeds.py build-fuzz/seeds >/dev/null

# Regressions: decode-* and walk-* inputs share one format (fuzz_common.h).
shopt -s nullglob
regress() {
  local h=$1; shift
  [ $# -gt 0 ] || return 0
  build-fuzz/fuzz/fuzz_"$h" -timeout=10 -rss_limit_mb=2048 "$@" >build-fuzz/regress-"$h".log 2>&1 ||
    { tail -40 build-fuzz/regress-"$h".log >&2; echo "fuzz_$h: a regression input fails" >&2; return 1; }
  echo "fuzz_$h: $# regression inputs pass"
}
regress frame fuzz/regressions/frame-*
regress decode fuzz/regressions/decode-* fuzz/regressions/walk-*
regress walk fuzz/regressions/decode-* fuzz/regressions/walk-*
regress write fuzz/regressions/write-*
regress html fuzz/regressions/html-*

# The kept corpus: what libFuzzer's -merge=1 kept of the long runs' corpora
# (inputs that add coverage), replayed whole. A local corpus found an
# allocation-failure bug that no CI run had met (docs/hardening.md).
rm -rf build-fuzz/replay && mkdir -p build-fuzz/replay
tar xJf fuzz/replay.tar.xz -C build-fuzz/replay
replay() {
  local h=$1 dir=build-fuzz/replay/$1
  build-fuzz/fuzz/fuzz_"$h" -runs=0 -timeout=10 -rss_limit_mb=2048 "$dir" >build-fuzz/replay-"$h".log 2>&1 ||
    { tail -40 build-fuzz/replay-"$h".log >&2; echo "fuzz_$h: an input of the kept corpus fails" >&2; return 1; }
  echo "fuzz_$h: $(find "$dir" -type f | wc -l) inputs of the kept corpus pass"
}
replay frame
replay decode
replay walk

run() {
  local h=$1 seeds=build-fuzz/seeds/decode extra=() max_len=16384
  case $h in
  frame | write) seeds=build-fuzz/seeds/$h ;;
  html) seeds=build-fuzz/seeds/html max_len=65536 ;;
  esac
  [ -d build-fuzz/replay/"$h" ] && extra+=(build-fuzz/replay/"$h")
  [ -d fuzz/corpus-"$h" ] && extra+=(fuzz/corpus-"$h")
  mkdir -p build-fuzz/corpus-smoke-"$h"
  if build-fuzz/fuzz/fuzz_"$h" -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
      -dict=fuzz/flight.dict -print_final_stats=1 -artifact_prefix=build-fuzz/crash-"$h"- \
      build-fuzz/corpus-smoke-"$h" "$seeds" "${extra[@]}" >build-fuzz/fuzz-"$h".log 2>&1; then
    echo "fuzz_$h: $(grep -o 'stat::number_of_executed_units: [0-9]*' build-fuzz/fuzz-"$h".log | grep -o '[0-9]*$') executions," \
      "$(grep -o 'cov: [0-9]* ft: [0-9]*' build-fuzz/fuzz-"$h".log | tail -1), no crash"
  else
    tail -60 build-fuzz/fuzz-"$h".log >&2
    echo "fuzz_$h: FAILED (input kept as build-fuzz/crash-$h-*)" >&2
    return 1
  fi
}
# (each wait on its own: a failed wait inside an && list would not stop
# the script under set -e)
pair() {
  local ok=0 a b
  run "$1" & a=$!
  run "$2" & b=$!
  wait $a || ok=1
  wait $b || ok=1
  return $ok
}
pair decode walk
pair write html
run frame
