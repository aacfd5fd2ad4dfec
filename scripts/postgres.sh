#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and for trying several `jam serve`
# nodes by hand. It listens only on 127.0.0.1 (trust auth, so no password), keeps
# everything in one folder and prints the URL to hand to `jam serve --database`.
#
#   scripts/postgres.sh start [DIR]   init (if new) and start; prints the URL on stdout
#                                     DIR defaults to a new mktemp -d folder
#   scripts/postgres.sh stop DIR      stop (fast) and delete DIR
#   scripts/postgres.sh restart DIR   stop and start again: same port, same data
#   scripts/postgres.sh kill DIR      SIGKILL the postmaster and its backends (a crash)
#   scripts/postgres.sh freeze DIR    SIGSTOP the postmaster and its backends: a database
#                                     that stops answering but keeps its connections open
#   scripts/postgres.sh thaw DIR      SIGCONT them again (stop and restart thaw first)
#   scripts/postgres.sh status DIR    exit 0 and print the URL when it accepts connections
#
# DIR holds data/ (the cluster), server.log, url, port and the unix socket.
# JAM_PG_NETNS_PEER=LOCAL/PEER (start, run inside a network namespace made for a test,
# scripts/partition-test.sh) also listens on LOCAL and trusts PEER: an address pair that
# exists only inside that namespace and its twin.
# Only the URL goes to stdout; everything else goes to stderr or DIR/server.log.
# Run as root it installs Debian's postgresql when missing and runs the server as
# the `postgres` system user (PostgreSQL refuses to run as root); run as anybody
# else it runs the server as that user and needs the binaries installed already.
set -euo pipefail

prog="scripts/postgres.sh"
db="openjam"
superuser="postgres"

die() { echo "$prog: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

usage() {
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Installs Debian's postgresql when no server binaries are present.
ensure_installed() {
  if compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then return; fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres); install Debian's postgresql, or run this as root"
  fi
  note "installing Debian's postgresql"
  apt-get update -qq >/dev/null
  # policy-rc.d-free environments (containers) may try to start the packaged
  # cluster; we never use it, and a failure to start it must not fail the install.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null ||
    compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null ||
    die "installing postgresql failed"
}

# The newest installed version's bin folder (Debian puts each major version apart).
find_bin() {
  local newest
  newest="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V | tail -n 1)"
  [ -n "$newest" ] && [ -x "$newest/pg_ctl" ] || die "no pg_ctl under /usr/lib/postgresql/*/bin"
  echo "$newest"
}

# Runs a PostgreSQL program as the user that owns the cluster.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  if command -v python3 >/dev/null; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
  else
    # No python: try random high ports until one has nobody listening.
    local p
    for _ in $(seq 50); do
      p=$((20000 + RANDOM % 40000))
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
    die "found no free port"
  fi
}

# Refuses to act on (and above all to delete) a folder that is not one of ours.
require_cluster_dir() {
  [ -n "${1:-}" ] || usage
  [ -f "$1/data/PG_VERSION" ] && [ -f "$1/port" ] || die "$1 is not a cluster made by $prog"
}

url_of() { echo "postgres://$superuser@127.0.0.1:$(cat "$1/port")/$db"; }

running() { as_pg "$bin/pg_ctl" -D "$1/data" status >/dev/null 2>&1; }

wait_ready() {
  local dir="$1" port
  port="$(cat "$dir/port")"
  for _ in $(seq 100); do
    if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -d postgres -U "$superuser"; then return 0; fi
    sleep 0.1
  done
  tail -n 20 "$dir/server.log" >&2 || true
  die "PostgreSQL in $dir is not ready after 10 s (log: $dir/server.log)"
}

# Starts the cluster in $1 on its recorded port; returns 1 (log tail on stderr) when it would not start.
pg_start() {
  local dir="$1"
  if running "$dir"; then return 0; fi
  # -w waits until it accepts connections; a stale postmaster.pid left by `kill` is handled by pg_ctl.
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -s start >/dev/null 2>&1 || {
    tail -n 20 "$dir/server.log" >&2 || true
    return 1
  }
}

write_config() {
  local dir="$1" port="$2" listen="127.0.0.1" peer=""
  if [ -n "${JAM_PG_NETNS_PEER:-}" ]; then
    [[ "$JAM_PG_NETNS_PEER" =~ ^([0-9.]+)/([0-9.]+)$ ]] || die "JAM_PG_NETNS_PEER must read LOCAL/PEER (two IPv4 addresses)"
    listen="127.0.0.1,${BASH_REMATCH[1]}"
    peer="${BASH_REMATCH[2]}"
  fi
  # Appended last so they win over initdb's defaults; `restart` keeps them.
  # postgresql.conf, not the command line, so a plain `pg_ctl start` also gets them.
  cat >>"$dir/data/postgresql.conf" <<EOF

# --- openjam test cluster ---
listen_addresses = '$listen'       # loopback (and a test namespace's private peer): trust auth must never face a network
port = $port
unix_socket_directories = '$dir'     # not /var/run/postgresql: several clusters, no root needed
fsync = on                           # the default, said aloud: the durability tests rely on it
max_connections = 200                # several jam nodes with pools plus parallel tests
max_locks_per_transaction = 256      # each node holds an advisory lock per session it owns
logging_collector = off              # everything goes to server.log via pg_ctl -l
EOF
  # Trust, but only over the socket in DIR and 127.0.0.1 (there is no other listener).
  cat >"$dir/data/pg_hba.conf" <<'EOF'
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   127.0.0.1/32  trust
EOF
  if [ -n "$peer" ]; then echo "host    all       all   $peer/32  trust" >>"$dir/data/pg_hba.conf"; fi
}

cmd_start() {
  local dir="${1:-}" created=0
  ensure_installed
  bin="$(find_bin)"
  if [ -z "$dir" ]; then
    dir="$(mktemp -d -t openjam-pg.XXXXXX)"
    created=1
  fi
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"

  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "no 'postgres' system user (it comes with Debian's postgresql package)"
    chown postgres: "$dir"
    # 755: the server needs only its data/ to be private; others may read url and port.
    chmod 755 "$dir"
    # The server runs as postgres, so every folder above DIR must let it through.
    runuser -u postgres -- test -x "$dir" ||
      die "user postgres cannot reach $dir (a parent folder is not world-executable); pick a DIR under /tmp or omit DIR"
  fi

  if [ -f "$dir/data/PG_VERSION" ]; then
    # An existing cluster (restart, or start run twice): same data, same port.
    [ -f "$dir/port" ] || die "$dir/data exists but $dir/port does not; not a cluster made by $prog"
    pg_start "$dir" || die "PostgreSQL in $dir did not start (log: $dir/server.log)"
  else
    [ -z "$(ls -A "$dir")" ] || die "$dir is not empty and holds no cluster; give an empty or new folder"
    as_pg "$bin/initdb" -D "$dir/data" -U "$superuser" -A trust -E UTF8 --locale=C >"$dir/server.log" 2>&1 || {
      tail -n 20 "$dir/server.log" >&2
      die "initdb failed (log: $dir/server.log)"
    }
    # Written by this shell, appended to by the server (pg_ctl -l) as postgres.
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/server.log"; fi
    # A free port can be taken between picking it and binding it: try a few.
    local started=0 port
    for _ in 1 2 3; do
      port="$(free_port)"
      write_config "$dir" "$port"
      echo "$port" >"$dir/port"
      if pg_start "$dir"; then started=1; break; fi
      note "could not start on port $port; trying another"
      # Drop our block so the next attempt's settings replace it, not pile up.
      sed -i '/^# --- openjam test cluster ---$/,$d' "$dir/data/postgresql.conf"
    done
    if [ "$started" != 1 ]; then
      if [ "$created" = 1 ]; then rm -rf "$dir"; fi
      die "PostgreSQL did not start (log above)"
    fi
  fi
  wait_ready "$dir"

  local port
  port="$(cat "$dir/port")"
  if [ "$("$bin/psql" -h 127.0.0.1 -p "$port" -U "$superuser" -d postgres -XAtqc "select 1 from pg_database where datname = '$db'")" != 1 ]; then
    "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$superuser" "$db"
  fi
  url_of "$dir" >"$dir/url"
  # Owned by the caller, readable by all: tests and scripts read them.
  chmod 644 "$dir/url" "$dir/port"
  note "PostgreSQL $(basename "$(dirname "$bin")") in $dir (log: $dir/server.log)"
  cat "$dir/url"
}

# Stops the cluster in $1 (fast: open connections are cut) when it runs.
pg_stop() {
  local dir="$1"
  require_cluster_dir "$dir"
  bin="$(find_bin)"
  # A frozen server would never answer pg_ctl.
  signal_all "$dir" CONT || true
  if running "$dir"; then
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 -s stop >/dev/null ||
      die "PostgreSQL in $dir did not stop"
  fi
}

cmd_stop() {
  pg_stop "${1:-}"
  rm -rf "$1"
}

cmd_restart() {
  pg_stop "${1:-}"
  cmd_start "$1"
}

# Sends SIG$2 to the postmaster of $1, then to its backends (listed after it got the
# signal, so a STOP also catches one it forked meanwhile). Fails when no postmaster of $1
# runs: a stale postmaster.pid left by `kill` may name another process by now.
signal_all() {
  local dir="$1" pid children
  [ -f "$dir/data/postmaster.pid" ] || return 1
  pid="$(head -n 1 "$dir/data/postmaster.pid")"
  # The postmaster works in its data folder; another process with that pid does not.
  [ "$(readlink -f "/proc/$pid/cwd" 2>/dev/null)" = "$(readlink -f "$dir/data")" ] || return 1
  kill -"$2" "$pid" 2>/dev/null || return 1
  children="$(pgrep -P "$pid" || true)"
  # shellcheck disable=SC2086
  [ -z "$children" ] || kill -"$2" $children 2>/dev/null || true
}

cmd_freeze() {
  local dir="${1:-}"
  require_cluster_dir "$dir"
  signal_all "$dir" STOP || die "PostgreSQL in $dir is not running"
}

cmd_thaw() {
  local dir="${1:-}"
  require_cluster_dir "$dir"
  signal_all "$dir" CONT || die "PostgreSQL in $dir is not running"
}

cmd_kill() {
  local dir="${1:-}" pid children
  require_cluster_dir "$dir"
  [ -f "$dir/data/postmaster.pid" ] || die "PostgreSQL in $dir is not running"
  pid="$(head -n 1 "$dir/data/postmaster.pid")"
  # Its backends too, at the same instant: like a crash, every connection drops now,
  # and nothing lingers holding the shared memory that would stop the next start.
  children="$(pgrep -P "$pid" || true)"
  # shellcheck disable=SC2086
  kill -KILL "$pid" $children 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  die "postmaster $pid is still alive after SIGKILL"
}

cmd_status() {
  local dir="${1:-}"
  require_cluster_dir "$dir"
  bin="$(find_bin)"
  "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/port")" -d postgres -U "$superuser" || exit 1
  url_of "$dir"
}

bin=""
case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  restart) shift; cmd_restart "$@" ;;
  kill) shift; cmd_kill "$@" ;;
  freeze) shift; cmd_freeze "$@" ;;
  thaw) shift; cmd_thaw "$@" ;;
  status) shift; cmd_status "$@" ;;
  *) usage ;;
esac
