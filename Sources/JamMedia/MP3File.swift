import Foundation

/// One MPEG-1, -2 or -2.5 layer III frame header.
struct MPEGFrame: Equatable {
    /// 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5 (the header's two version bits).
    var version: UInt8
    var sampleRate: Int
    var samplesPerFrame: Int
    /// Bytes of the whole frame, header included.
    var length: Int
    /// Bytes of side information after the header, where a Xing header would start.
    var sideInfoLength: Int

    /// The header at `offset`, if those four bytes are a valid layer III header.
    init?(_ bytes: [UInt8], at offset: Int) {
        guard offset >= 0, offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xE0 == 0xE0 else { return nil }
        let b1 = bytes[offset + 1], b2 = bytes[offset + 2], b3 = bytes[offset + 3]
        let version = (b1 >> 3) & 3, layer = (b1 >> 1) & 3
        let bitrateIndex = Int(b2 >> 4), rateIndex = Int((b2 >> 2) & 3)
        // Version 1 and emphasis 2 are reserved; free-format bitrate (0) gives no frame length.
        guard version != 1, layer == 1, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3, b3 & 3 != 2 else { return nil }
        let mpeg1 = version == 3
        let kbps = mpeg1 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320][bitrateIndex]
            : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160][bitrateIndex]
        let mono = b3 >> 6 == 3
        self.version = version
        sampleRate = [44_100, 48_000, 32_000][rateIndex] >> (mpeg1 ? 0 : version == 2 ? 1 : 2)
        samplesPerFrame = mpeg1 ? 1152 : 576
        length = samplesPerFrame / 8 * kbps * 1000 / sampleRate + Int((b2 >> 1) & 1)
        sideInfoLength = mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
    }

    /// Whether `other` can belong to the same stream.
    func sameStream(_ other: MPEGFrame) -> Bool { version == other.version && sampleRate == other.sampleRate }
}

/// Reads MP3: ID3v2 tags in front, ID3v1 (and APE) behind, and the length from the
/// Xing/Info header (with LAME's delay and padding), a VBRI header, or by counting frames.
enum MP3File {
    static func read(_ file: FileReader, cover: Bool) throws(AudioFile.ReadError) -> ParsedAudio {
        let (id3, audioStart) = try ID3v2.read(file, at: 0, covers: CoverPicker(wanted: cover))
        var tags = id3.tags
        var audioEnd = file.size
        if let v1 = try ID3v1.read(file) {
            tags.fillGaps(from: v1)
            audioEnd -= 128
        }
        audioEnd -= try apeTagSize(file, endingAt: audioEnd)
        guard let start = try findFrame(file, from: audioStart, before: audioEnd, like: nil) else {
            throw AudioFile.ReadError("no MPEG audio frames found")
        }
        let first = start.frame
        let frameBytes = try file.read(at: start.offset, count: first.length)
        var samples: Int64
        // No layer III frame is under 24 bytes, so a frame count the bytes cannot hold is damage.
        if let xing = xingHeader(frameBytes, first), let frames = xing.frames, frames * 24 <= Int64(audioEnd - start.offset) {
            if let bytes = xing.bytes, bytes > audioEnd - start.offset {
                throw AudioFile.ReadError("truncated MP3 (the Xing header promises \(bytes) bytes of audio, \(audioEnd - start.offset) are there)")
            }
            samples = frames * Int64(first.samplesPerFrame) - xing.delayAndPadding
            if samples <= 0 { samples = frames * Int64(first.samplesPerFrame) }
        } else if let frames = vbriFrames(frameBytes) {
            samples = frames * Int64(first.samplesPerFrame)
        } else {
            samples = try countFrames(file, from: start.offset, before: audioEnd, like: first)
        }
        let metadata = AudioMetadata(format: .mp3, tags: tags, samples: samples, sampleRate: first.sampleRate, hasCover: id3.covers.found)
        return ParsedAudio(metadata: metadata, cover: id3.covers.best)
    }

    /// The first frame at or after `offset` whose successor is also a frame of the same
    /// stream (or which ends exactly at `limit`): a lone `FF Ex` in junk is not enough.
    static func findFrame(_ file: FileReader, from offset: Int, before limit: Int, like: MPEGFrame?)
        throws(AudioFile.ReadError) -> (offset: Int, frame: MPEGFrame)? {
        var position = offset
        while position + 4 <= limit {
            defer { position += 1 }
            guard try file.byte(at: position) == 0xFF,
                  let frame = MPEGFrame(try file.read(at: position, count: 4), at: 0),
                  like.map(frame.sameStream) ?? true else { continue }
            let next = position + frame.length
            if next == limit { return (position, frame) }
            guard next + 4 <= limit, let following = MPEGFrame(try file.read(at: next, count: 4), at: 0),
                  following.sameStream(frame) else { continue }
            return (position, frame)
        }
        return nil
    }

    /// Samples in the frames from `offset` to `limit`, resynchronising over junk.
    static func countFrames(_ file: FileReader, from offset: Int, before limit: Int, like first: MPEGFrame)
        throws(AudioFile.ReadError) -> Int64 {
        var position = offset
        var samples: Int64 = 0
        while position + 4 <= limit {
            if let frame = MPEGFrame(try file.read(at: position, count: 4), at: 0), frame.sameStream(first) {
                samples += Int64(frame.samplesPerFrame)
                position += frame.length
            } else if let next = try findFrame(file, from: position + 1, before: limit, like: first) {
                position = next.offset
            } else {
                break
            }
        }
        return samples
    }

    /// The Xing (VBR) or Info (CBR) header in the first frame: frame and byte counts, and
    /// from the LAME extension the encoder delay and padding to take off the length.
    static func xingHeader(_ frame: [UInt8], _ header: MPEGFrame) -> (frames: Int64?, bytes: Int?, delayAndPadding: Int64)? {
        let start = 4 + header.sideInfoLength
        guard Bytes.match(frame, start, "Xing") || Bytes.match(frame, start, "Info"), start + 8 <= frame.count else { return nil }
        let flags = Bytes.uintBE(frame, start + 4, 4)
        var position = start + 8
        var frames: Int64?, bytes: Int?
        if flags & 1 != 0, position + 4 <= frame.count {
            frames = Int64(Bytes.uintBE(frame, position, 4))
            position += 4
        }
        if flags & 2 != 0, position + 4 <= frame.count {
            bytes = Int(Bytes.uintBE(frame, position, 4))
            position += 4
        }
        position += (flags & 4 != 0 ? 100 : 0) + (flags & 8 != 0 ? 4 : 0)
        var delayAndPadding: Int64 = 0
        // Encoders that write the LAME extension: LAME itself and FFmpeg.
        if ["LAME", "Lavf", "Lavc"].contains(where: { Bytes.match(frame, position, $0) }), position + 24 <= frame.count {
            let packed = Bytes.uintBE(frame, position + 21, 3)
            delayAndPadding = Int64(packed >> 12) + Int64(packed & 0xFFF)
        }
        return (frames == 0 ? nil : frames, bytes == 0 ? nil : bytes, delayAndPadding)
    }

    /// The frame count of a Fraunhofer VBRI header, always 32 bytes after the frame header.
    static func vbriFrames(_ frame: [UInt8]) -> Int64? {
        guard Bytes.match(frame, 36, "VBRI"), 36 + 18 <= frame.count else { return nil }
        let frames = Int64(Bytes.uintBE(frame, 36 + 14, 4))
        return frames > 0 ? frames : nil
    }

    /// Bytes of an APEv2 tag ending at `end` (before any ID3v1), so frame counting stops there.
    static func apeTagSize(_ file: FileReader, endingAt end: Int) throws(AudioFile.ReadError) -> Int {
        guard end >= 32 else { return 0 }
        let footer = try file.read(at: end - 32, count: 32)
        guard Bytes.match(footer, 0, "APETAGEX"), footer.count == 32 else { return 0 }
        var reader = ByteReader(footer, at: 12, what: "APE tag")
        let size = Int(try reader.u32le())
        _ = try reader.u32le()
        let hasHeader = try reader.u32le() & 0x8000_0000 != 0
        let total = size + (hasHeader ? 32 : 0)
        return total <= end ? total : 0
    }
}
