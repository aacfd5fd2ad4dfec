#!/usr/bin/env bash
# Runs every OpenJam test: installs what it needs on Debian, builds, walks through
# the README's curl session against a real `jam serve`, smoke-runs the benchmarks,
# builds and checks the single-file release binary, drives the browser client, then
# runs the Swift test suites. CI runs this via .ci/run with JAM_REQUIRE_ALL=1.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it began, so a slow run shows which step grew.
started=$SECONDS
step() { printf '==> [%dm%02ds] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$1"; }

# Debian packages the tests use; installed only when missing. iproute2: the partition
# test's network namespaces. postgresql and haproxy:
# the PostgreSQL store and cluster tests (several nodes behind deploy/haproxy.cfg).
needed=(curl jq tmux postgresql haproxy iproute2)
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

# A throwaway PostgreSQL cluster (scripts/postgres.sh: 127.0.0.1 only, runs as the
# postgres user) for the PostgreSQL store and cluster tests, which skip without
# JAM_TEST_DATABASE_URL unless JAM_REQUIRE_ALL=1. Started before the build so a broken
# set-up shows at once; stopped and deleted on any exit.
step "PostgreSQL for the tests"
pg_dir=""
stop_postgres() {
  if [ -n "$pg_dir" ]; then
    scripts/postgres.sh stop "$pg_dir" || echo "warning: could not stop PostgreSQL in $pg_dir" >&2
    pg_dir=""
  fi
}
trap stop_postgres EXIT
# Without these, SIGINT/SIGTERM could end the script without running the EXIT trap.
trap 'exit 130' INT
trap 'exit 143' TERM
pg_dir="$(mktemp -d -t openjam-test-pg.XXXXXX)"
if pg_url="$(scripts/postgres.sh start "$pg_dir")"; then
  export JAM_TEST_DATABASE_URL="$pg_url"
  # The cluster's folder, for tests that restart or kill the database with scripts/postgres.sh.
  export JAM_TEST_DATABASE_DIR="$pg_dir"
  echo "PostgreSQL at $pg_url"
else
  # postgres.sh deletes only folders holding a cluster; this one may hold a failed initdb.
  rm -rf "$pg_dir"
  pg_dir=""
  if [ "${JAM_REQUIRE_ALL:-0}" = 1 ]; then
    echo "could not start PostgreSQL with scripts/postgres.sh (see above); the PostgreSQL and cluster tests need it (JAM_REQUIRE_ALL=1)" >&2
    exit 1
  fi
  echo "warning: could not start PostgreSQL (see above); the PostgreSQL and cluster tests will be skipped" >&2
fi
# Debian puts haproxy in /usr/sbin, which a non-root PATH may lack.
JAM_TEST_HAPROXY="$(PATH="$PATH:/usr/sbin:/sbin" command -v haproxy || true)"
export JAM_TEST_HAPROXY

step "building"
swift build --build-tests

step "README walk-through against a real server"
scripts/readme-walkthrough.sh

step "benchmark smoke runs (debug build: they check the benchmarks work, not the figures)"
for bench in "sync" "sync --protocol pirate-radio" "fanout" "fanout --protocol pirate-radio" "durable" "prepare" "idle" "restart"; do
  # shellcheck disable=SC2086
  timeout 180 .build/debug/jam-bench $bench --smoke --jam .build/debug/jam
done
if [ -n "${JAM_TEST_DATABASE_URL:-}" ]; then
  # Several nodes on the test cluster (the benchmark makes and drops a database of its own).
  timeout 180 .build/debug/jam-bench fanout --nodes 2 --database "$JAM_TEST_DATABASE_URL" --smoke --jam .build/debug/jam
fi

step "a node cut off from PostgreSQL by the network (scripts/partition-test.sh)"
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null; then
  timeout 180 scripts/partition-test.sh .build/debug/jam
elif [ "${JAM_REQUIRE_ALL:-0}" = 1 ]; then
  echo "the partition test needs root and iproute2 (network namespaces) (JAM_REQUIRE_ALL=1)" >&2
  exit 1
else
  echo "warning: not root or no iproute2; the partition test is skipped" >&2
fi

step "crash-and-restart soak, 1 minute (scripts/soak.sh)"
timeout 600 scripts/soak.sh 1 --kill-max 30

step "the single-file release build, run from an empty folder with the build folders hidden"
scripts/release.sh --check

step "web client in two headless browsers"
scripts/browser-tests.sh

step "the REST API against /openapi.json (schemathesis, scripts/api-check.sh)"
timeout 900 scripts/api-check.sh

step "fuzzing every parser strangers reach, 10 s per target (scripts/fuzz.sh)"
timeout 1800 scripts/fuzz.sh "${JAM_FUZZ_SECONDS:-10}"

step "Swift tests"
# A hung test must fail the run with a diagnosis, not stall CI: after the limit the
# run is stopped and the tests that started but never finished are named.
log="$(mktemp -t openjam-tests.XXXXXX)"
status=0
# At most 8 tests at once: started all together, the suites' servers, nodes and child
# processes starve one another on two cores, and tests with a wall-clock limit (a stop's end,
# a node's start) then fail for want of a turn, not of a feature. The whole run takes as long.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}"
# The clock-sync simulations (thousands of seeded virtual networks) keep both cores busy for
# about 30 s; run beside the rest, they hold the shared thread pool that every other test's
# server and client wait on, and short waits elsewhere run out. They run on their own, after.
simulations='ClockSyncTests|ClockSteadyTests'
run_tests() {
  local code=0
  timeout --kill-after=30 "${JAM_TEST_TIME_LIMIT:-1200}" swift test --skip-build "$@" 2>&1 | tee -a "$log" || code=$?
  if [ "$code" = 124 ] || [ "$code" = 137 ]; then
    echo "Swift tests did not finish within ${JAM_TEST_TIME_LIMIT:-1200} s; still running:" >&2
    scripts/unfinished-tests.py "$log" >&2
  fi
  return "$code"
}
run_tests --skip "$simulations" || status=$?
step "Swift tests: the clock-sync simulations"
run_tests --filter "$simulations" || status=$?
rm -f "$log"
step "done"
exit "$status"
