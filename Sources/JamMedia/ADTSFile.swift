import Foundation

/// Reads raw AAC in ADTS frames (`.aac`): tags from a leading ID3v2 tag, the length by
/// counting frames, since ADTS has no length field. Encoder priming is part of the
/// stream (nothing says how much), so the length includes it, as players play it.
enum ADTSFile {
    static let sampleRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350]

    /// One frame header: its length in bytes, sample rate and samples.
    struct Frame: Equatable {
        var length: Int
        var sampleRate: Int
        var samples: Int
    }

    /// Whether `bytes` start with an ADTS sync word (`FFF`, layer 0).
    static func isHeader(_ bytes: [UInt8]) -> Bool { frame(bytes, at: 0) != nil }

    static func frame(_ bytes: [UInt8], at offset: Int) -> Frame? {
        guard offset >= 0, offset + 7 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xF6 == 0xF0 else { return nil }
        let rateIndex = Int(bytes[offset + 2] >> 2) & 0x0F
        let length = Int(bytes[offset + 3] & 0x03) << 11 | Int(bytes[offset + 4]) << 3 | Int(bytes[offset + 5] >> 5)
        guard rateIndex < sampleRates.count, length >= 7 else { return nil }
        return Frame(length: length, sampleRate: sampleRates[rateIndex], samples: 1024 * (Int(bytes[offset + 6] & 0x03) + 1))
    }

    static func read(_ file: FileReader, cover: Bool) throws(AudioFile.ReadError) -> ParsedAudio {
        let (id3, audioStart) = try ID3v2.read(file, at: 0, covers: CoverPicker(wanted: cover))
        var position = audioStart
        var first: Frame?
        var samples: Int64 = 0
        while position + 7 <= file.size {
            let header = try file.read(at: position, count: 7)
            if let frame = frame(header, at: 0), first == nil || frame.sampleRate == first?.sampleRate {
                first = first ?? frame
                samples += Int64(frame.samples)
                position += frame.length
            } else if let next = try resync(file, from: position + 1, like: first) {
                position = next
            } else {
                break
            }
        }
        guard let first else { throw AudioFile.ReadError("no ADTS frames found") }
        let metadata = AudioMetadata(format: .aac, tags: id3.tags, samples: samples, sampleRate: first.sampleRate, hasCover: id3.covers.found)
        return ParsedAudio(metadata: metadata, cover: id3.covers.best)
    }

    /// The next header at or after `offset` that another header follows (or that ends the
    /// file), skipping junk; an ID3v1 tag or a truncated tail yields nil.
    static func resync(_ file: FileReader, from offset: Int, like first: Frame?) throws(AudioFile.ReadError) -> Int? {
        var position = offset
        while position + 7 <= file.size {
            defer { position += 1 }
            guard try file.byte(at: position) == 0xFF, let candidate = frame(try file.read(at: position, count: 7), at: 0),
                  first == nil || candidate.sampleRate == first?.sampleRate else { continue }
            let next = position + candidate.length
            if next == file.size { return position }
            if frame(try file.read(at: next, count: 7), at: 0) != nil { return position }
        }
        return nil
    }
}
