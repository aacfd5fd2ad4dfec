#!/usr/bin/env bash
# Runs the curl walk-through from README.md (the block after "<!-- walkthrough -->")
# against a freshly started `jam serve`, so the README stays true.
set -euo pipefail
cd "$(dirname "$0")/.."

jam=.build/debug/jam
[ -x "$jam" ] || swift build --product jam
data=$(mktemp -d)
log="$data/serve.log"
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
"$jam" serve --port 0 --data-dir "$data" >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "${port:-}" ] || { echo "jam serve did not start:"; cat "$log"; exit 1; }

script=$(awk '/<!-- walkthrough -->/{on=1; next} on && /^```bash/{inblock=1; next} inblock && /^```/{exit} inblock{print}' README.md)
[ -n "$script" ] || { echo "README.md has no walk-through block"; exit 1; }
script=${script//localhost:8080/localhost:$port}
out=$(bash -euo pipefail -c "$script" 2>&1) || { echo "$out"; echo "README walk-through FAILED"; exit 1; }
echo "$out" | tail -n 5
# The walk-through ends by printing the queue; it must show both songs in vote order.
echo "$out" | grep -q '"Second song"' || { echo "walk-through output lacks the queued song"; exit 1; }
echo "README walk-through passed"
