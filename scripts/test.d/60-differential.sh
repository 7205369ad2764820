#!/usr/bin/env bash
# rscflight against React 19.3.1's own client, payload by payload, over the
# kept fuzz corpus, the 19.3.1 fixtures with their rows shuffled 8 times
# each, 12,000 random well-formed payloads, half of them development ones,
# and 12,000 such payloads with one small mutation each, half of them
# development ones too (a row dropped,
# repeated or moved, a "$" form or a reference changed, a byte replaced,
# a row cut; tests/conformance/differential.py, tests/conformance/flightgen.py): a payload that decodes
# differently and is not listed in tests/conformance/differential-known.txt fails the
# run, and so does a listed one that no longer differs. Needs Node 20 (the
# engine React's client runs on: other versions word JSON.parse's errors
# otherwise) and the npm registry for fixtures/gen's pinned packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/react-client.sh
need_react_client differential
PYTHONPATH=build/python /usr/bin/python3 tests/conformance/differential.py \
  --corpus fuzz/replay.tar.xz --permute 8 --generate 6000 --mutate 6000 --known tests/conformance/differential-known.txt
# and 6,000 generated development payloads, 6,000 mutated ones
PYTHONPATH=build/python /usr/bin/python3 tests/conformance/differential.py \
  --generate 6000 --generate-dev --mutate 6000 --seed 2 --known tests/conformance/differential-known.txt
