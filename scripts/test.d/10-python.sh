#!/usr/bin/env bash
# The Python binding (python/): its pytest suite against the extension that
# CMake builds into build/python, then the same suite against an
# ASan+UBSan build of the library and the extension (libasan preloaded into
# /usr/bin/python3). Run by scripts/test; alone: bash scripts/test.d/10-python.sh
#   RSC_PY_ASAN=0          skip the sanitizer pass
#   RSC_PY_BUILD=DIR       the build directory (default build, as scripts/test)
#   RSC_PY_ASAN_BUILD=DIR  the sanitizer build directory (default build-pyasan)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
jobs=$(nproc)
B=${RSC_PY_BUILD:-build}
A=${RSC_PY_ASAN_BUILD:-build-pyasan}
# One pytest worker per core when pytest-xdist is there (scripts/deps.sh test
# installs it); the tests share no state between them.
par=()
"$PY" -c "import xdist" 2>/dev/null && par=(-n "$jobs")

# The build may have been configured without the binding: turn it on.
if ! grep -q '^RSC_BUILD_PYTHON:BOOL=ON' "$B/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$B" -DRSC_BUILD_PYTHON=ON >/dev/null
fi
cmake --build "$B" -j"$jobs" --target rscflight_python rscflight_python_files rscflight_cli
PYTHONPATH="$B/python" "$PY" -c "import rscflight"
RSCFLIGHT_BUILD_DIR="$B" PYTHONPATH="$B/python" \
  "$PY" -m pytest -q -p no:cacheprovider "${par[@]}" python/tests
# The bench driver's arithmetic (medians of per-round ratios).
"$PY" -m pytest -q -p no:cacheprovider bench/tests

if [ "${RSC_PY_ASAN:-1}" != 0 ]; then
  echo "--- python/tests under ASan+UBSan"
  cmake -S . -B "$A" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRSC_SANITIZER=address,undefined \
    -DRSC_BUILD_TESTS=OFF -DRSC_BUILD_PYTHON=ON >/dev/null
  cmake --build "$A" -j"$jobs" --target rscflight_python rscflight_python_files rscflight_cli
  # The ASan runtime the extension was linked with goes first; Python's own
  # allocator off so ASan sees every allocation; CPython's deliberate leaks
  # at exit are not ours (leak checking is test_leak.py's).
  asan_rt=$(ldd "$A"/python/rscflight/_rscflight*.so | awk '/asan/ {print $3; exit}')
  LD_PRELOAD="$asan_rt" PYTHONMALLOC=malloc \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  RSCFLIGHT_BUILD_DIR="$A" PYTHONPATH="$A/python" \
    "$PY" -m pytest -q -p no:cacheprovider "${par[@]}" python/tests
fi
