#!/usr/bin/env bash
# Several `jam serve` nodes on one PostgreSQL behind HAProxy, on this machine, for
# trying them by hand (failover, resume, one session seen from every node).
#
#   scripts/cluster.sh start N [--jam PATH] [--port P]
#       a throwaway PostgreSQL (scripts/postgres.sh), N nodes on 127.0.0.1:P+1..P+N
#       sharing it and one generated JAM_SECRET, HAProxy (deploy/haproxy.cfg) on
#       127.0.0.1:P; prints the address to open. P defaults to 8080, PATH to
#       .build/debug/jam (build it first: swift build --product jam).
#   scripts/cluster.sh kill K      kill -9 node K: its clients move to the others
#   scripts/cluster.sh revive K    start node K again (same port, folder and secret)
#   scripts/cluster.sh status      what is running
#   scripts/cluster.sh stop        stop everything and delete the state folder
#
# State (pids, logs, data folders, the secret) lives in .cluster/ in the repository
# (JAM_CLUSTER_DIR to put it elsewhere): nodeK.log, haproxy.log, postgres.dir.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
state="${JAM_CLUSTER_DIR:-$repo/.cluster}"
prog="scripts/cluster.sh"

die() { echo "$prog: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Debian keeps haproxy in /usr/sbin, which a non-root PATH may lack.
find_haproxy() {
  local h
  h="$(PATH="$PATH:/usr/sbin:/sbin" command -v haproxy || true)"
  if [ -z "$h" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      note "installing Debian's haproxy"
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
      h="$(PATH="$PATH:/usr/sbin:/sbin" command -v haproxy)"
    else
      die "haproxy is not installed (Debian: apt-get install haproxy)"
    fi
  fi
  echo "$h"
}

# True when the pid in $1 is alive and still runs the program named $2 (a recycled
# pid belonging to something else must never be signalled).
alive() {
  local pid
  [ -f "$1" ] || return 1
  pid="$(cat "$1")"
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"
}

# Sends TERM, waits up to 10 s, then KILL.
terminate() {
  local pidfile="$1" what="$2" pid
  alive "$pidfile" "$what" || { rm -f "$pidfile"; return 0; }
  pid="$(cat "$pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; return 0; }
    sleep 0.1
  done
  note "pid $pid ($what) ignored SIGTERM for 10 s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Waits until http://127.0.0.1:$1/healthz answers 200 while the process in $2 lives.
wait_healthy() {
  local port="$1" pidfile="$2" what="$3" log="$4"
  for _ in $(seq 300); do
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port/healthz" 2>/dev/null; then return 0; fi
    if ! alive "$pidfile" "$what"; then
      tail -n 20 "$log" >&2 || true
      return 1
    fi
    sleep 0.1
  done
  tail -n 20 "$log" >&2 || true
  return 1
}

# Starts node $1 from what `start` recorded in the state folder.
start_node() {
  local k="$1" jam port url secret
  jam="$(cat "$state/jam")"
  port=$(($(cat "$state/lb-port") + k))
  url="$(cat "$state/database-url")"
  secret="$(cat "$state/secret")"
  mkdir -p "$state/node$k"
  if port_busy "$port"; then die "port $port (node $k) is already in use"; fi
  # The secret goes in the environment, not the arguments, so `ps` does not show it.
  # --database, not JAM_DATABASE_URL: a jam without PostgreSQL support then refuses to
  # start instead of quietly serving its own SQLite sessions.
  # HAProxy connects from 127.0.0.1: per-address limits count the client it forwards.
  JAM_SECRET="$secret" nohup "$jam" serve --host 127.0.0.1 --port "$port" \
    --data-dir "$state/node$k" --database "$url" --trusted-proxy 127.0.0.1 >>"$state/node$k.log" 2>&1 </dev/null &
  echo $! >"$state/node$k.pid"
  wait_healthy "$port" "$state/node$k.pid" "$jam" "$state/node$k.log" ||
    die "node $k did not come up on port $port (log: $state/node$k.log)"
  note "node $k on http://127.0.0.1:$port (pid $(cat "$state/node$k.pid"), log: $state/node$k.log)"
}

# deploy/haproxy.cfg with its `server node1` line repeated once per node (nodeK at
# 127.0.0.1:P+K) and the other `server nodeN` lines dropped: the file stays the one
# source of truth for every other setting.
write_haproxy_config() {
  local n="$1" lb_port="$2"
  awk -v n="$n" -v base="$lb_port" '
    /^[ \t]*server[ \t]+node1[ \t]/ {
      for (k = 1; k <= n; k++) {
        line = $0
        sub(/node1/, "node" k, line)
        sub(/"[^"]*"/, "\"127.0.0.1:" base + k "\"", line)
        print line
      }
      next
    }
    /^[ \t]*server[ \t]+node[0-9]+[ \t]/ { next }
    { print }
  ' deploy/haproxy.cfg >"$state/haproxy.cfg"
  grep -q "server node$n " "$state/haproxy.cfg" ||
    die "deploy/haproxy.cfg has no 'server node1 \"ADDRESS\" ...' line to repeat"
}

cmd_start() {
  local n="" jam=".build/debug/jam" lb_port=8080
  while [ $# -gt 0 ]; do
    case "$1" in
      --jam) jam="${2:?--jam needs a path}"; shift 2 ;;
      --port) lb_port="${2:?--port needs a number}"; shift 2 ;;
      -h|--help) usage ;;
      *) [ -z "$n" ] || usage; n="$1"; shift ;;
    esac
  done
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || die "start needs the number of nodes (1-99)"
  [[ "$lb_port" =~ ^[0-9]+$ ]] && [ $((lb_port + n)) -le 65535 ] || die "bad --port $lb_port"
  [ -x "$jam" ] || die "no jam binary at $jam (build it: swift build --product jam, or pass --jam PATH)"
  jam="$(cd "$(dirname "$jam")" && pwd)/$(basename "$jam")"
  if [ -d "$state" ] && [ -n "$(ls -A "$state" 2>/dev/null)" ]; then
    die "$state is in use: run '$prog stop' first"
  fi
  local haproxy
  haproxy="$(find_haproxy)"
  for p in $(seq "$lb_port" $((lb_port + n))); do
    if port_busy "$p"; then die "port $p is already in use"; fi
  done

  mkdir -p "$state"
  chmod 700 "$state"   # it holds the token secret
  # From here on a failure (die or set -e) would leave a half-started cluster: take
  # it down again on the way out.
  cluster_up=0
  trap 'if [ "$cluster_up" != 1 ]; then note "start failed; stopping what was started"; cmd_stop; fi' EXIT

  echo "$jam" >"$state/jam"
  echo "$lb_port" >"$state/lb-port"
  echo "$n" >"$state/nodes"
  # Every node must sign and check tokens with the same secret.
  od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$state/secret"

  # postgres.sh makes its own folder under /tmp: the server runs as user postgres,
  # which may not be able to reach a folder inside the repository.
  local pg_dir url
  pg_dir="$(mktemp -d -t openjam-cluster-pg.XXXXXX)"
  echo "$pg_dir" >"$state/postgres.dir"
  url="$(scripts/postgres.sh start "$pg_dir")"
  echo "$url" >"$state/database-url"

  for k in $(seq "$n"); do start_node "$k"; done

  write_haproxy_config "$n" "$lb_port"
  "$haproxy" -c -q -f "$state/haproxy.cfg" || die "HAProxy rejects $state/haproxy.cfg"
  # -db: stay in the foreground of its own (background) job, logging to haproxy.log.
  JAM_LB_BIND="127.0.0.1:$lb_port" nohup "$haproxy" -db -f "$state/haproxy.cfg" \
    >>"$state/haproxy.log" 2>&1 </dev/null &
  echo $! >"$state/haproxy.pid"
  wait_healthy "$lb_port" "$state/haproxy.pid" haproxy "$state/haproxy.log" ||
    die "HAProxy did not come up on port $lb_port (log: $state/haproxy.log)"
  cluster_up=1

  note "PostgreSQL at $url (folder $pg_dir)"
  note "HAProxy on 127.0.0.1:$lb_port in front of $n node(s) (log: $state/haproxy.log)"
  note "try: $prog kill 1   then watch the browser reconnect to another node"
  echo "http://127.0.0.1:$lb_port/"
}

cmd_stop() {
  [ -d "$state" ] || { note "nothing to stop ($state does not exist)"; return 0; }
  local jam="jam"
  [ -f "$state/jam" ] && jam="$(cat "$state/jam")"
  # The balancer first, so no client is sent to a node that is going away.
  terminate "$state/haproxy.pid" haproxy
  for pidfile in "$state"/node*.pid; do
    [ -e "$pidfile" ] || continue
    terminate "$pidfile" "$jam"
  done
  if [ -f "$state/postgres.dir" ]; then
    local pg_dir
    pg_dir="$(cat "$state/postgres.dir")"
    if [ -f "$pg_dir/data/PG_VERSION" ]; then
      scripts/postgres.sh stop "$pg_dir" || note "could not stop PostgreSQL in $pg_dir"
    else
      rm -rf "$pg_dir"   # an empty folder from a start that failed early
    fi
  fi
  rm -rf "$state"
  note "stopped"
}

node_number() {
  [ -f "$state/nodes" ] || die "no cluster is running (start one: $prog start N)"
  [[ "${1:-}" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le "$(cat "$state/nodes")" ] ||
    die "name a node from 1 to $(cat "$state/nodes")"
}

cmd_kill() {
  node_number "${1:-}"
  alive "$state/node$1.pid" "$(cat "$state/jam")" || die "node $1 is not running"
  kill -KILL "$(cat "$state/node$1.pid")"
  rm -f "$state/node$1.pid"
  note "node $1 killed; HAProxy marks it down within about a second"
}

cmd_revive() {
  node_number "${1:-}"
  ! alive "$state/node$1.pid" "$(cat "$state/jam")" || die "node $1 is running"
  start_node "$1"
}

cmd_status() {
  [ -f "$state/nodes" ] || { echo "no cluster ($state)"; return 1; }
  local lb_port jam
  lb_port="$(cat "$state/lb-port")"
  jam="$(cat "$state/jam")"
  echo "balancer  http://127.0.0.1:$lb_port/  $(alive "$state/haproxy.pid" haproxy && echo "up (pid $(cat "$state/haproxy.pid"))" || echo down)"
  for k in $(seq "$(cat "$state/nodes")"); do
    echo "node $k    http://127.0.0.1:$((lb_port + k))/  $(alive "$state/node$k.pid" "$jam" && echo "up (pid $(cat "$state/node$k.pid"))" || echo down)"
  done
  echo "database  $(scripts/postgres.sh status "$(cat "$state/postgres.dir")" 2>/dev/null || echo down)"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  kill) cmd_kill "${2:-}" ;;
  revive) cmd_revive "${2:-}" ;;
  status) cmd_status ;;
  *) usage ;;
esac
