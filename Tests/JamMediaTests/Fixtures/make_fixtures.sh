#!/usr/bin/env bash
# Regenerates the audio fixtures of JamMediaTests: short mono sine tones of known
# length, tagged, most with an embedded 8x8 PNG cover (cover.png).
# Needs ffmpeg (with libmp3lame, libvorbis, libopus), sox and python3:
#   apt-get install -y ffmpeg sox
# The tests read the true lengths from lengths.txt, which this script writes from
# the tones' exact sample counts.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Bit-exact output (no version strings, fixed Ogg serial numbers), so reruns give the same bytes.
ff() { ffmpeg -hide_banner -loglevel error -y "${@:1:$#-1}" -fflags +bitexact -flags:a +bitexact "${@: -1}"; }

# tone NAME RATE SECONDS: a 440 Hz mono 16-bit tone with an exact number of samples.
tone() { sox -D -n -r "$2" -c 1 -b 16 "$work/$1.wav" synth "$3" sine 440 vol 0.5; }
tags=(-metadata title="Tone in A" -metadata artist="The Fixtures" -metadata album="Test Signals")
cafe=(-metadata title="Café" -metadata artist="Zoë & the Ünicode" -metadata album="Smörgåsbord")
front=(-metadata:s:v title="Album cover" -metadata:s:v comment="Cover (front)")

ff -f lavfi -i color=c=0x3366cc:s=8x8 -frames:v 1 cover.png
# The same picture as a FLAC picture block, base64: how Vorbis comments carry a cover.
picture=$(python3 - <<'PY'
import base64, struct
png = open("cover.png", "rb").read()
mime = b"image/png"
block = struct.pack(">II", 3, len(mime)) + mime + struct.pack(">I", 0) + struct.pack(">IIIII", 8, 8, 24, 0, len(png)) + png
print(base64.b64encode(block).decode())
PY
)

: > lengths.txt
length() { echo "$1 $2" >> lengths.txt; }

tone t8k 8000 1.0
ff -i "$work/t8k.wav" "${tags[@]}" -c:a pcm_s16le tone.wav
length tone.wav 1.0

tone t16k 16000 1.5
ff -i "$work/t16k.wav" -i cover.png -map 0:a -map 1:v -c:a flac -c:v copy -disposition:v attached_pic "${front[@]}" "${cafe[@]}" tone.flac
length tone.flac 1.5

tone t22k 22050 2.0
tone t44k 44100 2.0
tone t8kmp3 8000 2.5
# VBR, Xing header with the LAME delay and padding, ID3v2.4 (UTF-8 text), MPEG-2.
ff -i "$work/t22k.wav" -i cover.png -map 0:a -map 1:v -c:a libmp3lame -q:a 9 -c:v copy "${front[@]}" "${cafe[@]}" -id3v2_version 4 vbr-v24.mp3
length vbr-v24.mp3 2.0
# CBR with an Info header, ID3v2.3 (non-ASCII text becomes UTF-16 with a BOM), MPEG-1.
ff -i "$work/t44k.wav" -i cover.png -map 0:a -map 1:v -c:a libmp3lame -b:a 32k -c:v copy "${front[@]}" "${cafe[@]}" -id3v2_version 3 cbr-v23-utf16.mp3
length cbr-v23-utf16.mp3 2.0
# CBR without any Xing/Info header: the length comes from counting frames. ID3v1 too.
ff -i "$work/t44k.wav" -c:a libmp3lame -b:a 32k "${tags[@]}" -write_xing 0 -write_id3v1 1 cbr-noxing.mp3
length cbr-noxing.mp3 2.0
# No ID3v2 at all, only ID3v1 at the end; MPEG-2.5 (8 kHz).
# (FFmpeg 5 writes no ID3v1 without ID3v2, so the 128-byte tag is appended here.)
ff -i "$work/t8kmp3.wav" -c:a libmp3lame -b:a 8k -id3v2_version 0 id3v1-mpeg25.mp3
python3 - <<'PY'
field = lambda text: text.encode("latin-1").ljust(30, b"\0")
tag = b"TAG" + field("Tone in A") + field("The Fixtures") + field("Test Signals") + b"2024" + field("") + bytes([255])
open("id3v1-mpeg25.mp3", "ab").write(tag)
PY
length id3v1-mpeg25.mp3 2.5

ff -i "$work/t22k.wav" -c:a libvorbis -q:a 0 "${tags[@]}" -metadata METADATA_BLOCK_PICTURE="$picture" vorbis.ogg
length vorbis.ogg 2.0
# The same stream with its header packets re-paged into pages of one lacing
# value (at most 255 bytes), so the comment packet spans pages; ffmpeg has no option for that.
python3 - <<'PY'
import struct
def crc(data):
    value = 0
    for byte in data:
        value ^= byte << 24
        for _ in range(8):
            value = ((value << 1) ^ 0x04C11DB7 if value & 0x80000000 else value << 1) & 0xFFFFFFFF
    return value
def page(kind, granule, serial, sequence, lacing, body):
    head = b"OggS\0" + bytes([kind]) + struct.pack("<qII", granule, serial, sequence) + b"\0\0\0\0"
    raw = head + bytes([len(lacing)]) + bytes(lacing) + body
    return raw[:22] + struct.pack("<I", crc(raw)) + raw[26:]
data = open("vorbis.ogg", "rb").read()
pages, offset = [], 0
while offset < len(data):
    count = data[offset + 26]
    lacing = list(data[offset + 27:offset + 27 + count])
    end = offset + 27 + count + sum(lacing)
    pages.append((data[offset + 5], struct.unpack("<q", data[offset + 6:offset + 14])[0], struct.unpack("<I", data[offset + 14:offset + 18])[0], lacing, data[offset + 27 + count:end]))
    offset = end
serial = pages[0][2]
out = [page(*pages[0][:3], 0, pages[0][3], pages[0][4])]
# Page 1 holds exactly the comment and setup packets; give each lacing value its own page.
_, _, _, lacing, body = pages[1]
position, continued = 0, False
for start in range(len(lacing)):
    run = lacing[start:start + 1]
    size = sum(run)
    out.append(page(1 if continued else 0, 0 if run[-1] < 255 else -1, serial, len(out), run, body[position:position + size]))
    position += size
    continued = run[-1] == 255
for kind, granule, _, lacing, body in pages[2:]:
    out.append(page(kind, granule, serial, len(out), lacing, body))
open("vorbis-small-pages.oga", "wb").write(b"".join(out))
PY
length vorbis-small-pages.oga 2.0

tone t48k 48000 2.5
ff -i "$work/t48k.wav" -c:a libopus -b:a 12k "${cafe[@]}" -metadata METADATA_BLOCK_PICTURE="$picture" tone.opus
length tone.opus 2.5

tone t44km 44100 1.5
ff -i "$work/t44km.wav" -i cover.png -map 0:a -map 1:v -c:a aac -b:a 24k -c:v copy -disposition:v attached_pic "${cafe[@]}" tone.m4a
length tone.m4a 1.5
# ADTS has no length field nor priming info: its length is whole frames, priming included.
ff -i "$work/t48k.wav" -c:a aac -b:a 24k "${tags[@]}" -f adts -write_id3v2 1 tone.aac
length tone.aac 2.5
