#!/usr/bin/env bash
# Writes the data folder of a `jam serve` of an earlier release as a fixture: three live
# sessions with members, roles, settings, votes, skip requests, history, a paused and a
# playing timeline, plus an ended one. `expected.json` holds each member's view as that
# server answered it, for the test that opens the folder with today's server.
#
#   make_release_fixture.sh PATH-TO-OLD-jam OUT-FOLDER [TERM|KILL]
#
# release-2026-11: commit 8c3c054, the release before the session log (one JSON row per
#   session), stopped with SIGTERM.
# release-2026-11-27: commit 84a0877, the session log, killed (SIGKILL) so that sessions come
#   back from their records, not from snapshots taken at shutdown.
set -euo pipefail
usage="usage: make_release_fixture.sh PATH-TO-OLD-jam OUT-FOLDER [TERM|KILL]"
jam=${1:?$usage}
out=${2:?$usage}
signal=${3:-TERM}
case "$signal" in TERM | KILL) ;; *) echo "$usage" >&2; exit 64 ;; esac
mkdir -p "$out"
here=$(cd "$out" && pwd)
secret=fixture-secret-0123456789abcdef0123456789abcdef
data=$(mktemp -d)
log="$data/serve.log"
"$jam" serve --port 0 --data-dir "$data" --secret "$secret" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -n1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "${port:-}" ] || { cat "$log"; exit 1; }
base="http://127.0.0.1:$port"
call() { # METHOD PATH TOKEN [BODY]
  curl -sf -X "$1" "$base$2" -H "Authorization: Bearer $3" -H 'Content-Type: application/json' ${4:+-d "$4"}
}
guest() { curl -sf -X POST "$base/auth/guest" -H 'Content-Type: application/json' -d "{\"displayName\":\"$1\"}"; }
track() { echo "{\"track\":{\"id\":\"$1\",\"name\":\"$2\",\"artist\":\"The Fixtures\",\"album\":\"Old Release\",\"durationMs\":$3,\"source\":\"external\"},\"nonce\":\"n-$1\"}"; }

alice=$(guest Alice); bob=$(guest Bob); cara=$(guest Cara); dan=$(guest Dan); eve=$(guest Eve)
tok() { echo "$1" | jq -r .token; }
A=$(tok "$alice"); B=$(tok "$bob"); C=$(tok "$cara"); D=$(tok "$dan"); E=$(tok "$eve")

# 1. Paused, fair ordering, a co-host, votes both ways and a skip request.
s1=$(call POST /api/v1/sessions "$A" '{"name":"Friday night","settings":{"skipThreshold":0.75,"ordering":"fair","maxQueuedPerMember":7}}')
id1=$(echo "$s1" | jq -r .session.id); code1=$(echo "$s1" | jq -r .session.joinCode)
call POST /api/v1/sessions/join "$B" "{\"code\":\"$code1\"}" >/dev/null
call POST /api/v1/sessions/join "$C" "{\"code\":\"$code1\"}" >/dev/null
call PUT "/api/v1/sessions/$id1/members/$(echo "$cara" | jq -r .userId)/role" "$A" '{"role":"cohost"}' >/dev/null
call POST "/api/v1/sessions/$id1/queue" "$A" "$(track f-1 'Long Opener' 36000000)" >/dev/null
i2=$(call POST "/api/v1/sessions/$id1/queue" "$B" "$(track f-2 'Second' 200000)" | jq -r .id)
i3=$(call POST "/api/v1/sessions/$id1/queue" "$C" "$(track f-3 'Third' 210000)" | jq -r .id)
i4=$(call POST "/api/v1/sessions/$id1/queue" "$B" "$(track f-4 'Fourth' 220000)" | jq -r .id)
call PUT "/api/v1/sessions/$id1/queue/$i3/vote" "$A" '{"value":1}' >/dev/null
call PUT "/api/v1/sessions/$id1/queue/$i3/vote" "$B" '{"value":1}' >/dev/null
call PUT "/api/v1/sessions/$id1/queue/$i4/vote" "$C" '{"value":-1}' >/dev/null
call PUT "/api/v1/sessions/$id1/queue/$i2/vote" "$C" '{"value":1}' >/dev/null
sleep 1.2
call POST "/api/v1/sessions/$id1/skip-requests" "$B" >/dev/null
call PATCH "/api/v1/sessions/$id1" "$A" '{"playback":"pause"}' >/dev/null

# 2. Playing: a short track played out into the history, a ten-hour one plays on.
s2=$(call POST /api/v1/sessions "$D" '{"name":"Long play"}')
id2=$(echo "$s2" | jq -r .session.id); code2=$(echo "$s2" | jq -r .session.joinCode)
call POST /api/v1/sessions/join "$E" "{\"code\":\"$code2\"}" >/dev/null
call POST "/api/v1/sessions/$id2/queue" "$D" "$(track p-1 'Short One' 900)" >/dev/null
i7=$(call POST "/api/v1/sessions/$id2/queue" "$E" "$(track p-2 'Ten Hours' 36000000)" | jq -r .id)
call POST "/api/v1/sessions/$id2/queue" "$E" "$(track p-3 'After That' 180000)" >/dev/null
i5=$(call POST "/api/v1/sessions/$id2/queue" "$D" "$(track p-4 'Last' 190000)" | jq -r .id)
call PUT "/api/v1/sessions/$id2/queue/$i7/vote" "$D" '{"value":1}' >/dev/null
call PUT "/api/v1/sessions/$id2/queue/$i5/vote" "$E" '{"value":-1}' >/dev/null
sleep 8  # p-1 plays out (prepare-ahead, then its end): p-2 is current and playing

# 3. A locked session whose only song was removed, with a regenerated code.
s3=$(call POST /api/v1/sessions "$B" '{"name":"Locked room","settings":{"locked":true,"allowDuplicates":true}}')
id3=$(echo "$s3" | jq -r .session.id)
call POST "/api/v1/sessions/$id3/queue" "$B" "$(track l-1 'Gone Soon' 120000)" >/dev/null
i6=$(call POST "/api/v1/sessions/$id3/queue" "$B" "$(track l-2 'Stays' 125000)" | jq -r .id)
call POST "/api/v1/sessions/$id3/queue" "$B" "$(track l-3 'Removed' 126000)" >/dev/null
i8=$(call GET "/api/v1/sessions/$id3" "$B" | jq -r '.queue[] | select(.track.id == "l-3") | .id')
call DELETE "/api/v1/sessions/$id3/queue/$i8" "$B" >/dev/null
call PATCH "/api/v1/sessions/$id3" "$B" '{"regenerateJoinCode":true}' >/dev/null

# 4. Ended.
s4=$(call POST /api/v1/sessions "$E" '{"name":"Over"}')
id4=$(echo "$s4" | jq -r .session.id)
call DELETE "/api/v1/sessions/$id4" "$E" >/dev/null

sleep 1  # the locked room's first song leaves "preparing"
view() { call GET "/api/v1/sessions/$2" "$1"; }
# When the views were read: a session's unattended rules count from its own instants, so the
# test opens the folder on a clock that starts here.
captured=$(date +%s%3N)
jq -n --arg secret "$secret" --argjson capturedAt "$captured" \
  --argjson alice "$alice" --argjson bob "$bob" --argjson cara "$cara" --argjson dan "$dan" --argjson eve "$eve" \
  --arg ended "$id4" \
  --argjson a1 "$(view "$A" "$id1")" --argjson b1 "$(view "$B" "$id1")" --argjson c1 "$(view "$C" "$id1")" \
  --argjson d2 "$(view "$D" "$id2")" --argjson e2 "$(view "$E" "$id2")" \
  --argjson b3 "$(view "$B" "$id3")" \
  '{secret: $secret, capturedAt: $capturedAt, users: ([$alice, $bob, $cara, $dan, $eve] | map(del(.token))), endedSession: $ended,
    views: [{user: $alice.userId, view: $a1}, {user: $bob.userId, view: $b1}, {user: $cara.userId, view: $c1},
            {user: $dan.userId, view: $d2}, {user: $eve.userId, view: $e2}, {user: $bob.userId, view: $b3}]}' \
  > "$data/expected.json"

kill "-$signal" "$pid"; wait "$pid" || true
# A killed server can leave records in the write-ahead log that no checkpoint reached yet: fold
# them into the database file, as the next start would, so the fixture is that one file.
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()' "$data/openjam.sqlite"
rm -f "$here/openjam.sqlite" "$here/openjam.sqlite-wal" "$here/openjam.sqlite-shm"
cp "$data/openjam.sqlite" "$here/openjam.sqlite"
mv "$data/expected.json" "$here/expected.json"
ls -la "$here"
echo "fixture written"
