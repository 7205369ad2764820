#!/usr/bin/env bash
# What the builder (src/builder.c) writes, decoded by React 19.3.1's own
# client: every tree of tests/builder_trees.c and 60 random ones
# (bt_random), each one's React dump compared with
# the intended value written by hand and with `rscflight dump` of the same
# bytes (tests/conformance/builder-check.mjs). Needs Node 20, and the npm
# registry once for fixtures/gen's pinned packages (package-lock.json;
# nothing is fetched when fixtures/gen/node_modules is there).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/react-client.sh
need_react_client builder
cmake --build build --target builder_trees rscflight_cli >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build/tests/builder_trees "$out"
NODE_ENV=production node tests/conformance/builder-check.mjs "$out" build/rscflight
