import Foundation

/// Reads and writes PCM WAV files: the format details, the duration and the RIFF
/// `LIST/INFO` tags (title `INAM`, artist `IART`, album `IPRD`).
public struct WAVFile: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    public var bitsPerSample: Int
    /// Bytes of sample data.
    public var dataBytes: Int
    public var title: String?
    public var artist: String?
    public var album: String?

    /// Length in milliseconds.
    public var durationMs: Int64 {
        let frameBytes = max(1, channels * bitsPerSample / 8)
        return Int64((Double(dataBytes / frameBytes) / Double(max(1, sampleRate)) * 1000).rounded())
    }

    /// Why a file is not a readable WAV.
    public struct ReadError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Parses the header and tags of the WAV at `url` (the samples are not read).
    public static func read(_ url: URL) throws -> WAVFile {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        // Headers and tags live in the first chunks; reading 64 kB covers them.
        let head = try handle.read(upToCount: 65_536) ?? Data()
        let total = try handle.seekToEnd()
        return try parse(head, fileSize: Int(total))
    }

    static func parse(_ bytes: Data, fileSize: Int) throws -> WAVFile {
        let data = [UInt8](bytes)
        guard data.count >= 12, String(decoding: data[0..<4], as: UTF8.self) == "RIFF",
              String(decoding: data[8..<12], as: UTF8.self) == "WAVE"
        else { throw ReadError(description: "not a RIFF/WAVE file") }
        var info = WAVFile(sampleRate: 0, channels: 0, bitsPerSample: 0, dataBytes: 0)
        var offset = 12
        var sawFormat = false
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = Int(le32(data, offset + 4))
            let body = offset + 8
            switch id {
            case "fmt ":
                guard body + 16 <= data.count else { throw ReadError(description: "truncated fmt chunk") }
                let format = le16(data, body)
                // PCM, IEEE float and their extensible form: what browsers play.
                guard format == 1 || format == 3 || format == 0xFFFE else {
                    throw ReadError(description: "only PCM WAV is supported (format \(format))")
                }
                info.channels = Int(le16(data, body + 2))
                info.sampleRate = Int(le32(data, body + 4))
                info.bitsPerSample = Int(le16(data, body + 14))
                sawFormat = true
            case "data":
                // The data chunk may run past what was read: trust the header, capped by the file.
                info.dataBytes = min(size, fileSize - body)
            case "LIST" where body + 4 <= data.count && String(decoding: data[body..<body + 4], as: UTF8.self) == "INFO":
                var tag = body + 4
                while tag + 8 <= min(body + size, data.count) {
                    let key = String(decoding: data[tag..<tag + 4], as: UTF8.self)
                    let length = Int(le32(data, tag + 4))
                    let end = min(tag + 8 + length, data.count)
                    let value = TagText.utf8OrWindows1252(data[(tag + 8)..<end].prefix { $0 != 0 })
                    switch key {
                    case "INAM": info.title = value
                    case "IART": info.artist = value
                    case "IPRD": info.album = value
                    default: break
                    }
                    tag += 8 + length + (length & 1)
                }
            default:
                break
            }
            if id == "data" { break }
            offset = body + size + (size & 1)
        }
        guard sawFormat, info.sampleRate > 0, info.channels > 0, info.bitsPerSample > 0 else {
            throw ReadError(description: "no usable fmt chunk")
        }
        return info
    }

    /// A 16-bit PCM WAV with INFO tags, from samples in -1...1.
    public static func encode(samples: [Float], sampleRate: Int, title: String, artist: String, album: String) -> Data {
        func tag(_ key: String, _ value: String) -> [UInt8] {
            var text = Array(value.utf8) + [0]
            if text.count & 1 == 1 { text.append(0) }
            return Array(key.utf8) + le32Bytes(UInt32(text.count)) + text
        }
        let info = Array("INFO".utf8) + tag("INAM", title) + tag("IART", artist) + tag("IPRD", album)
        let list = Array("LIST".utf8) + le32Bytes(UInt32(info.count)) + info
        var pcm = [UInt8]()
        pcm.reserveCapacity(samples.count * 2)
        for sample in samples {
            let value = Int16(max(-1, min(1, sample)) * Float(Int16.max))
            pcm += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        let format: [UInt8] = Array("fmt ".utf8) + le32Bytes(16) + le16Bytes(1) + le16Bytes(1) + le32Bytes(UInt32(sampleRate))
            + le32Bytes(UInt32(sampleRate * 2)) + le16Bytes(2) + le16Bytes(16)
        let dataChunk = Array("data".utf8) + le32Bytes(UInt32(pcm.count)) + pcm
        let body = Array("WAVE".utf8) + format + list + dataChunk
        return Data(Array("RIFF".utf8) + le32Bytes(UInt32(body.count)) + body)
    }

    private static func le16(_ data: [UInt8], _ at: Int) -> UInt16 { UInt16(data[at]) | UInt16(data[at + 1]) << 8 }
    private static func le32(_ data: [UInt8], _ at: Int) -> UInt32 {
        UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24
    }
    private static func le16Bytes(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func le32Bytes(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
}
