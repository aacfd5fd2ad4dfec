#!/usr/bin/env bash
# Runs the web client's browser tests (Tests/Browser): headless Chromium driven by
# Selenium against a real `jam serve` on 127.0.0.1 that this script starts on a free
# port with a throw-away data folder, serving the web client built into the binary
# (set JAM_WEB_ROOT=Sources/JamWebClient/Web to test edits without rebuilding).
#
# Installs what it needs when missing: chromium and chromium-driver (Debian), selenium
# and pytest (PyPI). When the browser cannot be had, the run is skipped with the
# reason, unless JAM_REQUIRE_ALL=1 (CI), which makes that a failure.
#
# Environment: JAM_BIN (default .build/debug/jam), JAM_REQUIRE_ALL, PYTHON (python3),
# JAM_BROWSER_TEST_TIME_LIMIT (seconds, default 900: the 105 tests take ~7-8 min on this machine), extra pytest arguments as "$@".
# JAM_TEST_DATABASE_URL (a PostgreSQL URL whose user may CREATE DATABASE) and
# JAM_TEST_HAPROXY (the haproxy program), both exported by scripts/test.sh, reach pytest
# as they are: test_cluster.py starts its own three nodes on a fresh database behind
# HAProxy (deploy/haproxy.cfg) and is skipped without them unless JAM_REQUIRE_ALL=1.
set -euo pipefail
cd "$(dirname "$0")/.."

require_all="${JAM_REQUIRE_ALL:-0}"
python="${PYTHON:-python3}"
jam="${JAM_BIN:-.build/debug/jam}"

unavailable() {
  if [ "$require_all" = 1 ]; then
    echo "browser tests cannot run: $1 (JAM_REQUIRE_ALL=1)" >&2
    exit 1
  fi
  echo "browser tests skipped: $1"
  exit 0
}

have_browser() {
  { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; } && command -v chromedriver >/dev/null
}

if ! have_browser; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing chromium and chromium-driver"
    if ! { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }; then
      unavailable "apt-get could not install chromium and chromium-driver"
    fi
  fi
  have_browser || unavailable "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
fi

if ! "$python" -c 'import selenium, pytest' 2>/dev/null; then
  echo "==> installing selenium and pytest"
  "$python" -m pip install -q selenium pytest >/dev/null 2>&1 || unavailable "pip could not install selenium and pytest"
fi

if [ ! -x "$jam" ]; then
  echo "no jam binary at $jam: build it first (swift build) or set JAM_BIN" >&2
  exit 1
fi

data="$(mktemp -d -t openjam-browser.XXXXXX)"
log="$data/server.log"
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill "$server" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server" 2>/dev/null || true
  fi
  rm -rf "$data"
}
trap cleanup EXIT

# Port 0: the server picks a free port and prints it; no race with other programs.
# Request limits off: every person in every test comes from 127.0.0.1, and the suite opens
# more sessions than one address may in an hour (the limits have their own Swift tests).
JAM_RATE_LIMITS=off "$jam" serve --host 127.0.0.1 --port 0 --data-dir "$data/db" >"$log" 2>&1 &
server=$!
base=""
for _ in $(seq 1 300); do
  base="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$log" | head -n1 | sed 's/^listening on //' || true)"
  [ -n "$base" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$base" ]; then
  echo "jam serve did not start:" >&2
  cat "$log" >&2
  exit 1
fi
echo "==> browser tests against $base"

status=0
JAM_BASE_URL="$base" timeout --kill-after=15 "${JAM_BROWSER_TEST_TIME_LIMIT:-900}" \
  "$python" -m pytest -s -p no:cacheprovider Tests/Browser "$@" || status=$?
if [ "$status" != 0 ]; then
  [ "$status" = 124 ] && echo "browser tests did not finish within ${JAM_BROWSER_TEST_TIME_LIMIT:-900} s" >&2
  echo "--- server log (last 40 lines) ---" >&2
  tail -n 40 "$log" >&2
fi
exit "$status"
