#!/usr/bin/env bash
# The PirateRadio Node server (server/ of veganpolice/pirate-radi0), run unmodified beside
# OpenJam so `jam-bench … --protocol pirate-radio` can measure both in the same hour
# (docs/PERFORMANCE.md). It keeps everything in memory and runs on Debian's nodejs,
# node-express and node-ws; `jsonwebtoken`, which Debian does not package, is replaced by a
# small HS256 module of the same API written by this script, and a module loaded first
# makes a listen on a bare port listen on 127.0.0.1 only.
#
#   scripts/pirate-radio-reference.sh start SOURCE [DIR]   set up DIR and start the server;
#                                                         prints "URL PID" on stdout
#   scripts/pirate-radio-reference.sh stop DIR             stop it and delete DIR
#
# SOURCE is a checkout of the PirateRadio repository (a folder holding server/index.js) or
# its git directory (the server of HEAD is used). DIR (new or empty; default a new mktemp -d
# folder) holds the server's files, node_modules/, server.log, pid and url; `stop` deletes
# only a folder `start` set up. Run as root it installs the Debian packages when missing.
set -euo pipefail

prog="scripts/pirate-radio-reference.sh"
die() { echo "$prog: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Debian's node and the two packages the server imports.
ensure_installed() {
  if command -v node >/dev/null && [ -d /usr/share/nodejs/express ] && [ -d /usr/share/nodejs/ws ]; then return; fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "nodejs, node-express and node-ws are not installed; install them from Debian, or run this as root"
  fi
  note "installing Debian's nodejs, node-express and node-ws"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs node-express node-ws >/dev/null || die "installing the node packages failed"
}

# Copies the server's folder from SOURCE (a checkout or a git directory) into DIR.
copy_server() {
  local source="$1" dir="$2"
  if [ -f "$source/server/index.js" ]; then
    cp -R "$source/server/." "$dir/"
  elif git --git-dir="$source" rev-parse --verify -q HEAD:server/index.js >/dev/null 2>&1; then
    git --git-dir="$source" archive HEAD server | tar -x -C "$dir" --strip-components=1
  else
    die "$source is neither a checkout holding server/index.js nor a git directory with server/index.js at HEAD"
  fi
  [ -f "$dir/index.js" ] || die "no index.js was copied from $source"
}

# The server imports express, ws and jsonwebtoken as ES modules, which resolve only through
# node_modules folders: Debian's packages are linked in, jsonwebtoken is written. So is the
# module that keeps the server on loopback.
write_modules() {
  local modules="$1/node_modules"
  rm -rf "$modules"
  mkdir -p "$modules/jsonwebtoken"
  ln -s /usr/share/nodejs/express "$modules/express"
  ln -s /usr/share/nodejs/ws "$modules/ws"
  cat > "$modules/jsonwebtoken/package.json" <<'JSON'
{ "name": "jsonwebtoken", "version": "0.0.0-hs256", "main": "index.js" }
JSON
  cat > "$modules/jsonwebtoken/index.js" <<'JS'
// HS256 tokens with the calls the PirateRadio server makes: sign(payload, secret,
// { expiresIn }) and verify(token, secret), which throws on a bad signature or an expired token.
"use strict";
const crypto = require("crypto");

const encode = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
const mac = (text, secret) => crypto.createHmac("sha256", secret).update(text).digest("base64url");

// As jsonwebtoken reads it: a number counts seconds, a string without a unit milliseconds.
function seconds(expiresIn) {
  if (typeof expiresIn === "number") return expiresIn;
  const match = /^(\d+)\s*(ms|s|m|h|d)?$/.exec(String(expiresIn));
  if (!match) throw new Error(`expiresIn "${expiresIn}" is not understood`);
  return Math.floor(Number(match[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[match[2] || "ms"]);
}

function sign(payload, secret, options = {}) {
  const iat = Math.floor(Date.now() / 1000);
  const body = { ...payload, iat };
  if (options.expiresIn !== undefined) body.exp = iat + seconds(options.expiresIn);
  const unsigned = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(body)}`;
  return `${unsigned}.${mac(unsigned, secret)}`;
}

function invalid(message, name = "JsonWebTokenError") {
  const error = new Error(message);
  error.name = name;
  return error;
}

function verify(token, secret) {
  const parts = String(token).split(".");
  if (parts.length !== 3) throw invalid("jwt malformed");
  let header, body;
  try {
    header = JSON.parse(Buffer.from(parts[0], "base64url"));
    body = JSON.parse(Buffer.from(parts[1], "base64url"));
  } catch {
    throw invalid("jwt malformed");
  }
  if (!header || typeof header !== "object" || !body || typeof body !== "object") throw invalid("jwt malformed");
  if (header.alg !== "HS256") throw invalid("invalid algorithm");
  const expected = Buffer.from(mac(`${parts[0]}.${parts[1]}`, secret));
  const given = Buffer.from(parts[2]);
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) throw invalid("invalid signature");
  if (typeof body.exp === "number" && Math.floor(Date.now() / 1000) >= body.exp) throw invalid("jwt expired", "TokenExpiredError");
  return body;
}

module.exports = { sign, verify };
JS
  cat > "$1/loopback-only.cjs" <<'JS'
// The server calls listen(PORT): on every interface. Here a port alone means 127.0.0.1.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const portOnly = (typeof args[0] === "number" || typeof args[0] === "string") && (args.length === 1 || typeof args[1] === "function");
  if (portOnly) args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
JS
}

# A free port on 127.0.0.1, chosen by the kernel.
free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

start() {
  local source="${1:-}" dir="${2:-}"
  [ -n "$source" ] || usage
  ensure_installed
  if [ -z "$dir" ]; then dir="$(mktemp -d /tmp/pirate-radio-reference.XXXXXX)"; else mkdir -p "$dir"; fi
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty; give a new or empty folder"
  dir="$(CDPATH='' cd "$dir" && pwd)"
  touch "$dir/.pirate-radio-reference"
  copy_server "$source" "$dir"
  write_modules "$dir"
  local port url pid
  port="$(free_port)"
  url="http://127.0.0.1:$port"
  # NODE_PATH: the packages express and ws require in turn (CommonJS reads it; not every
  # build of node searches /usr/share/nodejs by itself).
  (cd "$dir" && NODE_PATH=/usr/share/nodejs PORT="$port" JWT_SECRET="${JWT_SECRET:-pirate-radio-reference-secret-0123456789abcdef}" \
    exec node --require ./loopback-only.cjs index.js >"$dir/server.log" 2>&1) &
  pid=$!
  echo "$pid" >"$dir/pid"
  echo "$url" >"$dir/url"
  for _ in $(seq 1 100); do
    if ! kill -0 "$pid" 2>/dev/null; then die "the server exited at once; see $dir/server.log: $(tail -n 3 "$dir/server.log")"; fi
    if grep -qs "listening on port $port" "$dir/server.log"; then
      note "the PirateRadio Node server listens at $url (pid $pid, files in $dir)"
      echo "$url $pid"
      return
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  die "the server did not listen within 10 s; see $dir/server.log"
}

stop() {
  local dir="${1:-}"
  [ -n "$dir" ] && [ -f "$dir/.pirate-radio-reference" ] && [ -f "$dir/pid" ] || die "$dir is not a folder this script started a server in"
  local pid
  pid="$(cat "$dir/pid")"
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) usage ;;
esac
