#!/usr/bin/env bash
# `rscflight report` pages opened in a real browser: headless Chromium
# (Debian's chromium, installed when missing) driven by puppeteer-core
# (pinned in tests/browser/package-lock.json; the npm registry once, nothing
# fetched when tests/browser/node_modules is there). For a small payload, a
# Next.js page and the 1 MB page: no console or page error, no request but
# file: and data:, the tooltip on hover, zoom, and the treemap's largest
# items against `rscflight stats` (tests/browser/report-test.mjs).
# Screenshots go to a temporary directory, or to RSC_REPORT_OUT when set.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing: chromium" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 18 ]; then
  echo "75-report: skipped: puppeteer-core needs Node 18 or later (found: $major)"
  exit 0
fi
if [ ! -d tests/browser/node_modules/puppeteer-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi
cmake --build build --target rscflight_cli >/dev/null
if [ -n "${RSC_REPORT_OUT:-}" ]; then
  out=$RSC_REPORT_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
timeout 60 node tests/browser/report-test.mjs build/rscflight "$out" \
  fixtures/react/19.3.1/prod/page-1k.rsc \
  fixtures/html/next-turbopack-catalog.html \
  fixtures/react/19.3.1/prod/feed-1mb.rsc
