#!/usr/bin/env bash
# The criterion suites again on an AddressSanitizer + UndefinedBehaviorSanitizer
# build (build-asan). Every UBSan report is fatal (-fno-sanitize-recover=all,
# set by RSC_SANITIZER), and LeakSanitizer runs at the end of each test
# process. docs/hardening.md says what this covers.
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=$(nproc)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRSC_SANITIZER=address,undefined \
  -DRSC_BUILD_TESTS=ON -DRSC_BUILD_PYTHON=OFF >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ctest --test-dir build-asan --output-on-failure --no-tests=error -j"$jobs" --timeout 900
