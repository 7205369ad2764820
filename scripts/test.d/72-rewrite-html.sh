#!/usr/bin/env bash
# `rscflight rewrite --html` on every page of fixtures/html, checked with the
# frameworks' own code (tests/conformance/rewrite-html-check.mjs): the
# rewritten page read back by Next.js's nextServerDataCallback and
# rsc-html-stream's rscStream, decoded by React 19.3.1's client to the
# original tree with exactly the matched strings changed, every other byte of
# the page in place, and each rewritten script what the framework writes
# (Next's htmlEscapeJsonString, rsc-html-stream's escapeScript). Needs Node
# 20, and the npm registry once for the pinned packages (lock files in
# fixtures/gen, fixtures/html/gen and fixtures/html/gen/next-app; of next
# only the package itself is installed: no optional native builds, no
# install scripts). Nothing is fetched when the node_modules are there.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/react-client.sh
need_react_client rewrite-html
npm_ci() { (cd "$1" && shift && npm ci --no-audit --no-fund --loglevel=error "$@"); }
[ -d fixtures/html/gen/node_modules/rsc-html-stream ] || npm_ci fixtures/html/gen
[ -d fixtures/html/gen/next-app/node_modules/next ] ||
  npm_ci fixtures/html/gen/next-app --omit=optional --ignore-scripts
cmake --build build --target rscflight_cli >/dev/null
NODE_ENV=production node tests/conformance/rewrite-html-check.mjs build/rscflight | grep -v '^ok '
