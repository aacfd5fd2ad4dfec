#!/usr/bin/env bash
# Crash-and-restart soak: MINUTES (default 10) of mixed load from the SDK (joins, adds,
# votes, skips, reconnects, auto-advances) while jam serve is killed with SIGKILL every
# 20–60 s and restarted on the same data folder. Fails unless every acknowledged add and
# vote survived, nothing was applied twice, every client's view equals the server's, and
# the server's memory and open file descriptors did not grow across cycles.
#
#   scripts/soak.sh [MINUTES] [jam-bench soak options…]   e.g. scripts/soak.sh 10 --sessions 8
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="${1:-10}"
shift || true
case "$minutes" in ''|*[!0-9.]*) echo "usage: scripts/soak.sh [MINUTES] [options]; MINUTES must be a number, got \"$minutes\"" >&2; exit 2 ;; esac

swift build --product jam 2>&1 | grep -E "error|Build complete" || true
swift build --product jam-bench 2>&1 | grep -E "error|Build complete" || true
exec .build/debug/jam-bench soak --minutes "$minutes" --jam .build/debug/jam "$@"
