#!/usr/bin/env bash
# Checks the REST API against its own description: starts jam serve, then lets
# schemathesis (PyPI) generate requests for every operation in /openapi.json (valid ones,
# edge cases and random ones) and check every answer: no server error, the status is one
# the description lists, the body and headers match their schemas, and a method a path does
# not take is answered 405 with Allow.
#
#   scripts/api-check.sh [MAX_EXAMPLES]      examples per operation and phase (default 40)
#
# Environment: JAM_BIN (default .build/debug/jam), PYTHON (python3).
set -euo pipefail
cd "$(dirname "$0")/.."

examples="${1:-40}"
python="${PYTHON:-python3}"
jam="${JAM_BIN:-.build/debug/jam}"
[ -x "$jam" ] || { echo "no $jam: build first (swift build)" >&2; exit 1; }
if ! "$python" -c 'import schemathesis' 2>/dev/null; then
  echo "==> installing schemathesis (PyPI)"
  "$python" -m pip install -q schemathesis >/dev/null 2>&1 || { echo "pip could not install schemathesis" >&2; exit 1; }
fi

work="$(mktemp -d -t openjam-api-check.XXXXXX)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$work/data"
# Rate limits off: the run sends far more requests from one address than people do. The
# media test files are the library, so the audio and artwork routes have tracks to serve.
JAM_RATE_LIMITS=off JAM_SOCKET_LIMITS=off "$jam" serve --host 127.0.0.1 --port 0 --data-dir "$work/data" --music Tests/JamMediaTests/Fixtures \
  --secret "api-check-secret-0123456789abcdef0123" --log-level warning > "$work/serve.log" 2>&1 &
server_pid=$!
base=""
for _ in $(seq 1 300); do
  base="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$work/serve.log" | head -1 || true)"
  [ -n "$base" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "jam serve exited:" >&2; cat "$work/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$base" ] || { echo "jam serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

# A member with sessions of their own, a queued item and a library track, so operations
# reach the rules behind them and not only "no such session". Ending and leaving get a
# session of their own, or they would end the one everything else uses.
json_field() { "$python" -c "import json,sys; print(eval('json.load(sys.stdin)' + sys.argv[1]))" "$1"; }
auth=(-H 'Content-Type: application/json')
token="$(curl -sf -X POST "$base/auth/guest" "${auth[@]}" -d '{"displayName":"Schema"}' | json_field '["token"]')"
auth+=(-H "Authorization: Bearer $token")
session="$(curl -sf -X POST "$base/api/v1/sessions" "${auth[@]}" -d '{}' | json_field '["session"]["id"]')"
ending="$(curl -sf -X POST "$base/api/v1/sessions" "${auth[@]}" -d '{}' | json_field '["session"]["id"]')"
track="$(curl -sf "$base/api/v1/search?q=&limit=1" "${auth[@]}" | json_field '["tracks"][0]["id"]')"
curl -sf -X POST "$base/api/v1/sessions/$session/queue" "${auth[@]}" -d '{"track":{"id":"api-1","name":"One","artist":"A","source":"external"},"nonce":"n1"}' >/dev/null
item="$(curl -sf -X POST "$base/api/v1/sessions/$session/queue" "${auth[@]}" -d '{"track":{"id":"api-2","name":"Two","artist":"B","source":"external"},"nonce":"n2"}' | json_field '["id"]')"
code="$(curl -sf "$base/api/v1/sessions/$session" "${auth[@]}" | json_field '["session"]["joinCode"]')"
guest="$(curl -sf -X POST "$base/auth/guest" -H 'Content-Type: application/json' -d '{"displayName":"Guest"}')"
guest_id="$(echo "$guest" | json_field '["userId"]')"
guest_token="$(echo "$guest" | json_field '["token"]')"
curl -sf -X POST "$base/api/v1/sessions/join" -H 'Content-Type: application/json' -H "Authorization: Bearer $guest_token" -d "{\"code\":\"$code\"}" >/dev/null
cat > "$work/schemathesis.toml" <<TOML
[parameters]
"path.id" = "$session"
"path.itemId" = "$item"
"path.userId" = "$guest_id"

[[operations]]
include-name = ["DELETE /api/v1/sessions/{id}", "POST /api/v1/sessions/{id}/leave"]
parameters = { "path.id" = "$ending" }

[[operations]]
include-path-regex = "^/api/v1/tracks/"
parameters = { "path.id" = "$track" }
TOML

echo "==> schemathesis against $base/openapi.json ($examples examples per operation and phase)"
status=0
# From the scratch folder: schemathesis keeps its caches in the working directory.
(cd "$work" && "$python" -m schemathesis.cli --config-file "$work/schemathesis.toml" run "$base/openapi.json" \
  --header "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,unsupported_method \
  --phases examples,coverage,fuzzing --max-examples "$examples" --seed 42 --request-timeout 10 \
  --exclude-path /api/v1/sessions/{id}/realtime \
  --report junit --report-dir "$work/report") || status=$?
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "jam serve died during the run:" >&2
  tail -50 "$work/serve.log" >&2
  status=1
fi
if grep -E "error|critical" "$work/serve.log" | grep -v "level=warning" | head -5 | grep -q .; then
  echo "the server logged errors during the run:" >&2
  grep -E "error|critical" "$work/serve.log" | head -20 >&2
fi
exit "$status"
