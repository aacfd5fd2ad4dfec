#!/usr/bin/env bash
# Builds the single-file server people install: `dist/jam`, a stripped release build
# with the Swift runtime and Foundation linked in (--static-swift-stdlib) and the web
# client built into it. On the target machine it needs glibc and libcurl (Debian and
# Ubuntu: libcurl4), nothing from a Swift toolchain.
#
#   scripts/release.sh           build dist/jam
#   scripts/release.sh --check   build it, then prove it: run a copy from an empty folder
#                                with an empty HOME while the build folders and the Swift
#                                toolchain are hidden (a mount namespace; needs root), and
#                                fetch the page, a module, the demo library and its audio
#
# Environment: JAM_RELEASE_BUILD_PATH (default .build-static: the static flags rebuild
# every module, so they get a build folder of their own), JAM_REQUIRE_ALL=1 makes a
# check that cannot run a failure instead of a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: scripts/release.sh [--check]" >&2; exit 2 ;;
esac

build_path="${JAM_RELEASE_BUILD_PATH:-.build-static}"

# Foundation's networking part (the terminal client's REST calls) links against libcurl;
# a static standard library leaves that to us, so the development package must be here.
if ! dpkg -s libcurl4-openssl-dev >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "==> installing libcurl4-openssl-dev"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcurl4-openssl-dev >/dev/null
  else
    echo "missing Debian package libcurl4-openssl-dev (install it, or run as root)" >&2
    exit 1
  fi
fi

echo "==> building jam (release, static Swift runtime) in $build_path"
swift build -c release --static-swift-stdlib --product jam --build-path "$build_path" -Xlinker -lcurl
mkdir -p dist
strip -o dist/jam "$build_path/release/jam"
echo "dist/jam: $(du -h dist/jam | cut -f1), links: $(objdump -p dist/jam | awk '/NEEDED/ {print $2}' | tr '\n' ' ')"
if ldd dist/jam | grep -q 'libswift\|libFoundation\|libdispatch\|libBlocksRuntime'; then
  echo "dist/jam still needs a Swift library at run time" >&2
  exit 1
fi

[ "$check" = 1 ] || exit 0

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  if [ "${JAM_REQUIRE_ALL:-0}" = 1 ]; then
    echo "the release check needs root and unshare to hide the build folders (JAM_REQUIRE_ALL=1)" >&2
    exit 1
  fi
  echo "release check skipped: it needs root and unshare to hide the build folders"
  exit 0
fi

place="$(mktemp -d -t openjam-release.XXXXXX)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$place"
}
trap cleanup EXIT
mkdir -p "$place/bin" "$place/home" "$place/run"
cp dist/jam "$place/bin/jam"

# Everything a stray path could reach: this checkout's build folders and the toolchain.
hide=("$PWD/.build" "$PWD/$build_path")
toolchain="$(dirname "$(dirname "$(command -v swift)")")"
[ "$toolchain" != /usr ] && hide+=("$toolchain")
mounts=""
for folder in "${hide[@]}"; do
  [ -d "$folder" ] && mounts+="mount -t tmpfs tmpfs '$folder' && "
done

echo "==> running a copy from $place/run with an empty HOME; hidden: ${hide[*]}"
unshare -m sh -c "${mounts}cd '$place/run' && exec env -i HOME='$place/home' PATH=/usr/bin:/bin '$place/bin/jam' serve --port 0" \
  >"$place/serve.log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 300); do
  port="$(grep -oE 'listening on http://127\.0\.0\.1:[0-9]+' "$place/serve.log" | grep -oE '[0-9]+$' || true)"
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "the copied jam did not start:" >&2
  cat "$place/serve.log" >&2
  exit 1
fi

base="http://127.0.0.1:$port"
fail() { echo "release check failed: $*" >&2; cat "$place/serve.log" >&2; exit 1; }
curl -sf "$base/" | grep -q '<html' || fail "the page is not served"
curl -sf "$base/js/main.js" >/dev/null || fail "the client's modules are not served"
token="$(curl -sf -X POST "$base/auth/guest" -H 'Content-Type: application/json' -d '{"displayName":"Release"}' | jq -r .token)"
track="$(curl -sf "$base/api/v1/search?q=" -H "Authorization: Bearer $token" | jq -r '.tracks[0].id')"
[ -n "$track" ] && [ "$track" != null ] || fail "the demo library is empty"
bytes="$(curl -sf -H 'Range: bytes=0-15' "$base/api/v1/tracks/$track/audio" | wc -c)"
[ "$bytes" = 16 ] || fail "the audio of $track is not served (got $bytes bytes)"
echo "release check passed: page, modules, demo library and audio served by a copy of dist/jam"
