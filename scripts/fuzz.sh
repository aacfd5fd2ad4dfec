#!/usr/bin/env bash
# Fuzzes every parser that reads what strangers send (Fuzz/JamFuzz/JamFuzz.swift): the
# OpenJam and PirateRadio client frames, the REST bodies, the Range header, IDs and join
# codes, and each audio format's tag reader, with libFuzzer and the address sanitizer.
#
#   scripts/fuzz.sh [SECONDS] [TARGET…]     SECONDS per target (default 60), all targets by default
#
# Seeds come from Fuzz/corpus/<target> and, for the audio readers, the media test fixtures.
# Prints executions and coverage per target; exits non-zero on any crash, hang (an input
# running over 10 s) or sanitizer report. Findings stay in $JAM_FUZZ_OUT/<target>/ and can
# be replayed with `JAM_FUZZ_TARGET=<target> .build-fuzz/debug/jam-fuzz <file>`. Without
# JAM_FUZZ_OUT the output goes to a temporary folder, removed when every target passed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
case "$seconds" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [TARGET…]; SECONDS must be a whole number, got \"$seconds\"" >&2; exit 2 ;; esac
all=(openjam-frame pirate-radio-frame rest-body byte-range ids-and-codes media-wav media-flac media-mp3 media-ogg media-mp4 media-aac)
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${all[@]}")

echo "==> building the fuzz targets (fuzzer and address sanitizers, .build-fuzz)"
# Coverage (the frontend's -sanitize=fuzzer) and ASan for every module, but libFuzzer's
# runtime only in jam-fuzz (Package.swift): the build tools must keep their own main.
swift build --build-path .build-fuzz -Xswiftc -sanitize=address -Xswiftc -Xfrontend -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld --product jam-fuzz 2>&1 | grep -E "error|warning: unre|Compiling jam_fuzz|Build complete" || true
bin=".build-fuzz/debug/jam-fuzz"
[ -x "$bin" ] || { echo "the fuzz build failed (see above)" >&2; exit 1; }

out="${JAM_FUZZ_OUT:-$(mktemp -d -t openjam-fuzz.XXXXXX)}"
fixtures=Tests/JamMediaTests/Fixtures
media_seeds() {
  case "$1" in
    media-wav) ls "$fixtures"/*.wav ;;
    media-flac) ls "$fixtures"/*.flac ;;
    media-mp3) ls "$fixtures"/*.mp3 ;;
    media-ogg) ls "$fixtures"/*.ogg "$fixtures"/*.oga "$fixtures"/*.opus ;;
    media-mp4) ls "$fixtures"/*.m4a ;;
    media-aac) ls "$fixtures"/*.aac ;;
  esac
}

failed=0
printf '%-20s %12s %10s %8s %8s  %s\n' target executions exec/s cov features result
for target in "${targets[@]}"; do
  dir="$out/$target"
  mkdir -p "$dir/corpus" "$dir/seeds"
  if [ -d "Fuzz/corpus/$target" ]; then cp Fuzz/corpus/"$target"/* "$dir/seeds/"; fi
  case "$target" in media-*) media_seeds "$target" | xargs -I{} cp {} "$dir/seeds/" ;; esac
  if [ -z "$(ls -A "$dir/seeds")" ]; then echo "no seeds for $target (unknown target? known: ${all[*]})" >&2; exit 2; fi
  set +e
  JAM_FUZZ_TARGET="$target" ASAN_OPTIONS="detect_leaks=0" "$bin" "$dir/corpus" "$dir/seeds" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=32768 \
    -artifact_prefix="$dir/" -print_final_stats=1 > "$dir/log" 2>&1
  status=$?
  set -e
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1 || true)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1 || true)"
  cov="$( (grep -oE 'cov: [0-9]+' "$dir/log" || true) | tail -1 | cut -d' ' -f2)"
  ft="$( (grep -oE 'ft: [0-9]+' "$dir/log" || true) | tail -1 | cut -d' ' -f2)"
  findings="$(ls "$dir" | grep -E '^(crash|timeout|oom|leak)-' || true)"
  if [ "$status" -eq 0 ] && [ -z "$findings" ]; then
    result=ok
  else
    result="FAILED (exit $status) ${findings//$'\n'/ }"
    failed=1
  fi
  printf '%-20s %12s %10s %8s %8s  %s\n' "$target" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
  if [ "$result" != ok ]; then
    echo "---- $target: the end of its log ($dir/log)" >&2
    tail -30 "$dir/log" >&2
  fi
done
if [ "$failed" -eq 0 ] && [ -z "${JAM_FUZZ_OUT:-}" ]; then
  rm -rf "$out"
else
  echo "fuzz output: $out"
fi
exit "$failed"
