#!/usr/bin/env bash
# The rewriter (src/rewrite.c) checked with React 19.3.1's own client: every
# payload of fixtures/react, fixtures/bundlers and fixtures/html/*.rsc gets
# a string prefix rewritten (/_next/ -> https://cdn.example/_next/ where it
# occurs), and the rewritten payload must decode to the original tree with
# exactly those strings changed (tests/conformance/rewrite-check.py; one
# Node process per client build). Needs Node 20, and the npm registry once
# for fixtures/gen's pinned packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/react-client.sh
need_react_client rewrite
B=${RSC_BUILD:-build}
if ! grep -q '^RSC_BUILD_PYTHON:BOOL=ON' "$B/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$B" -DRSC_BUILD_PYTHON=ON >/dev/null
fi
cmake --build "$B" --target rscflight_python rscflight_python_files rscflight_cli >/dev/null
/usr/bin/python3 tests/conformance/rewrite-check.py "$B"
