#!/usr/bin/env bash
# A node cut off from PostgreSQL by the network, for real. Two network namespaces made for
# this run are joined by a veth pair: PostgreSQL and node B in one, node A in the other.
# A creates a session and owns it; B follows it. Then A's end of the link goes down: its
# packets are dropped and nothing is reset, so neither side hears that the other is gone.
# B must take the session over within 30 s, keeping every acknowledged add exactly once,
# and A must serve the session again once the link is back.
#
#   scripts/partition-test.sh [JAM]      JAM defaults to .build/debug/jam
#
# Needs root and iproute2 (`ip`). It uses only addresses inside the namespaces it makes,
# and deletes them (and everything it started) on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "partition-test: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
command -v ip >/dev/null || die "needs iproute2 (ip)"
jam="$(realpath "${1:-.build/debug/jam}")"
[ -x "$jam" ] || die "no jam executable at $jam; build first"
# Inside the namespaces there is no network to install it from.
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || die "PostgreSQL is not installed (scripts/test.sh installs it)"

tag=$$
ns_db="jamdb$tag" ns_a="jama$tag"
# Interface names have at most 15 characters.
link_db="jd$tag" link_a="ja$tag"
addr_db=10.231.0.1 addr_a=10.231.0.2
work="$(mktemp -d -t openjam-partition.XXXXXX)"
# PostgreSQL runs as `postgres`, which must reach its folder inside this one.
chmod 755 "$work"
pids=()
pg_started=0
ok=0

cleanup() {
  for pid in "${pids[@]}"; do
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$pg_started" = 1 ]; then
    ip netns exec "$ns_db" scripts/postgres.sh stop "$work/pg" || echo "partition-test: could not stop PostgreSQL" >&2
  fi
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_db" 2>/dev/null || true
  if [ "$ok" != 1 ]; then
    for log in "$work"/a.log "$work"/b.log; do
      [ -f "$log" ] && { echo "--- $(basename "$log") (last 40 lines)"; tail -n 40 "$log"; }
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ip netns add "$ns_db"
ip netns add "$ns_a"
ip link add "$link_db" netns "$ns_db" type veth peer name "$link_a" netns "$ns_a"
ip -n "$ns_db" addr add "$addr_db/30" dev "$link_db"
ip -n "$ns_a" addr add "$addr_a/30" dev "$link_a"
for ns in "$ns_db" "$ns_a"; do ip -n "$ns" link set lo up; done
ip -n "$ns_db" link set "$link_db" up
ip -n "$ns_a" link set "$link_a" up

# Set first: a start that fails half-way may leave a server running, which stop handles.
pg_started=1
pg_url="$(JAM_PG_NETNS_PEER="$addr_db/$addr_a" ip netns exec "$ns_db" scripts/postgres.sh start "$work/pg" | tail -n 1)"
secret="partition-test-secret-0123456789abcdef"

# Starts `jam serve` in namespace $1 on address $2 with database URL $3, logging to $4.
serve() {
  local ns="$1" host="$2" url="$3" log="$4"
  ip netns exec "$ns" "$jam" serve --host "$host" --port 0 --data-dir "$work/data-$ns" --secret "$secret" \
    --database "$url" --log-level notice >"$log" 2>&1 &
  pids+=("$!")
}

# Prints the base URL of the node logging to $1 once it listens.
listening() {
  local log="$1" address=""
  for _ in $(seq 200); do
    address="$(grep -oE "listening on http://[0-9.]+:[0-9]+" "$log" | head -n 1 | sed 's/^listening on //' || true)"
    [ -n "$address" ] && { echo "$address"; return; }
    sleep 0.1
  done
  die "jam serve did not start (log: $log)"
}
serve "$ns_db" 127.0.0.1 "$pg_url" "$work/b.log"
serve "$ns_a" "$addr_a" "${pg_url/127.0.0.1/$addr_db}" "$work/a.log"
node_b="$(listening "$work/b.log")"
node_a="$(listening "$work/a.log")"

# The driver runs beside node B, so it reaches both nodes; it cuts and mends A's link itself.
ip netns exec "$ns_db" python3 - "$node_a" "$node_b" "$ns_a" "$link_a" <<'PY'
import json, subprocess, sys, time, urllib.error, urllib.request

node_a, node_b, ns_a, link_a = sys.argv[1:]

def call(base, method, path, token=None, body=None, timeout=15):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token: request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError as error:
        return None, str(error)

def add(base, token, session, n):
    track = {"id": f"track-{n}", "name": f"Song {n}", "artist": "The Testers", "durationMs": 200000, "source": "external"}
    return call(base, "POST", f"/api/v1/sessions/{session}/queue", token, {"track": track, "nonce": f"add-{n}"})

def tracks(view):
    playing = [view["nowPlaying"]["item"]["track"]["id"]] if view.get("nowPlaying") else []
    return playing + [item["track"]["id"] for item in view["queue"]]

def check(condition, what):
    if not condition:
        print(f"partition-test: FAILED: {what}", file=sys.stderr)
        sys.exit(1)

status, host = call(node_a, "POST", "/auth/guest", body={"displayName": "Host"})
check(status == 201, f"guest sign-in on A: {status} {host}")
token = host["token"]
status, created = call(node_a, "POST", "/api/v1/sessions", token, {"name": "Cut off"})
check(status == 201, f"create on A: {status} {created}")
session = created["session"]["id"]
status, answer = add(node_a, token, session, 1)
check(status == 201, f"add on A: {status} {answer}")
# B follows A's session and forwards its own members' commands to A.
status, answer = add(node_b, token, session, 2)
check(status == 201, f"add on B, forwarded to A: {status} {answer}")

subprocess.run(["ip", "-n", ns_a, "link", "set", link_a, "down"], check=True)
cut = time.monotonic()
print("A's link is down: its packets are dropped, nothing is reset")

# Repeated with the same nonce until B answers it: an earlier try B forwarded to A, or one
# left in the inbox, is answered, not applied again.
answers = []
while True:
    status, answer = add(node_b, token, session, 3)
    answers.append(status)
    if status in (200, 201):
        break
    check(time.monotonic() - cut < 30, f"B did not take the session over within 30 s (answers: {answers}, last: {answer})")
    time.sleep(0.5)
took = time.monotonic() - cut
print(f"B took the session over: the add was answered {took:.1f} s after the cut (answers on the way: {answers})")

status, view = call(node_b, "GET", f"/api/v1/sessions/{session}", token)
check(status == 200, f"read on B: {status} {view}")
check(sorted(tracks(view)) == ["track-1", "track-2", "track-3"], f"every acknowledged add once on B: {tracks(view)}")

subprocess.run(["ip", "-n", ns_a, "link", "set", link_a, "up"], check=True)
mended = time.monotonic()
while True:
    status, view = call(node_a, "GET", f"/api/v1/sessions/{session}", token, timeout=5)
    if status == 200 and sorted(tracks(view)) == ["track-1", "track-2", "track-3"]:
        break
    check(time.monotonic() - mended < 30, f"A did not serve the session again within 30 s: {status} {view}")
    time.sleep(0.5)
status, answer = add(node_a, token, session, 4)
check(status == 201, f"add on A after the link is back: {status} {answer}")
print(f"A serves the session again {time.monotonic() - mended:.1f} s after the link came back")
PY
grep -q "the database did not answer the lease connection in time" "$work/a.log" ||
  die "node A never said it gave up on the database (see a.log)"
ok=1
echo "partition-test: passed"
