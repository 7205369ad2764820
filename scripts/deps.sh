#!/usr/bin/env bash
# Installs the Debian packages rscflight needs, only those missing.
# Usage: scripts/deps.sh [build|test]   (test adds the test, sanitizer and
# fuzzing tools). Uses sudo when not root.
set -euo pipefail
want=(cmake make gcc g++ pkg-config libsimdjson-dev libutf8proc-dev libdouble-conversion-dev)
if [ "${1:-build}" = test ]; then
  want+=(libcriterion-dev python3 python3-cffi python3-pytest python3-pytest-xdist python3-dev clang clang-format libclang-rt-14-dev valgrind xz-utils)
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
