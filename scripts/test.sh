#!/usr/bin/env bash
# Runs every OpenJam test: installs what it needs on Debian, builds, runs the
# Swift test suites, then walks through the README's curl session against a
# real `jam serve`. CI runs this via .ci/run with JAM_REQUIRE_ALL=1.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests use; installed only when missing.
needed=(curl jq tmux)
missing=()
for pkg in "${needed[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "missing Debian packages: ${missing[*]} (install them, or run as root)" >&2
    exit 1
  fi
fi

echo "==> building"
swift build --build-tests

echo "==> README walk-through against a real server"
scripts/readme-walkthrough.sh

echo "==> Swift tests"
swift test --skip-build
