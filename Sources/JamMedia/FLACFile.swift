import Foundation

/// Reads FLAC: `fLaC`, then metadata blocks (STREAMINFO for the length, VORBIS_COMMENT
/// for the tags, PICTURE for covers), then audio frames.
enum FLACFile {
    /// STREAMINFO, the fields that matter here.
    struct StreamInfo {
        var maxBlockSize: Int
        var maxFrameSize: Int
        var sampleRate: Int
        var totalSamples: Int64
    }

    static let blockNames = [0: "STREAMINFO", 1: "PADDING", 2: "APPLICATION", 3: "SEEKTABLE", 4: "VORBIS_COMMENT", 5: "CUESHEET", 6: "PICTURE"]

    /// Reads the FLAC stream whose `fLaC` marker is at `start` (0, or after an ID3v2 tag).
    static func read(_ file: FileReader, at start: Int, cover: Bool) throws(AudioFile.ReadError) -> ParsedAudio {
        var offset = start + 4
        var covers = CoverPicker(wanted: cover)
        var tags = Tags()
        var info: StreamInfo?
        var isLast = false
        while !isLast {
            let header = try file.bytes(at: offset, count: 4, what: "FLAC metadata")
            isLast = header[0] & 0x80 != 0
            let type = Int(header[0] & 0x7F)
            let length = Int(Bytes.uintBE(header, 1, 3))
            let body = offset + 4
            let name = "FLAC " + (blockNames[type] ?? "metadata block (type \(type))")
            guard body + length <= file.size else { throw AudioFile.ReadError("truncated \(name)") }
            guard type != 127 else { throw AudioFile.ReadError("invalid FLAC metadata block type 127") }
            // The format requires STREAMINFO first; anything else means this is not FLAC after all.
            guard type == 0 || info != nil else { throw AudioFile.ReadError("FLAC without STREAMINFO") }
            switch type {
            case 0:
                guard length >= 34 else { throw AudioFile.ReadError("truncated FLAC STREAMINFO") }
                info = streamInfo(try file.bytes(at: body, count: 34, what: name))
            case 4:
                var reader = ByteReader(try file.bytes(at: body, count: length, what: name), what: name)
                tags = try VorbisComment.parse(&reader, covers: &covers)
            case 6:
                try covers.offer { () throws(AudioFile.ReadError) in
                    var reader = ByteReader(try file.bytes(at: body, count: length, what: name), what: name)
                    let picture = try FLACPicture.parse(&reader)
                    return (picture.type, picture.cover)
                }
            default:
                break
            }
            offset = body + length
        }
        guard let info else { throw AudioFile.ReadError("FLAC without STREAMINFO") }
        guard info.sampleRate > 0 else { throw AudioFile.ReadError("FLAC STREAMINFO gives no sample rate") }
        let sync = try file.read(at: offset, count: 2)
        guard sync.count == 2, sync[0] == 0xFF, sync[1] & 0xFE == 0xF8 else {
            throw AudioFile.ReadError("no FLAC audio frames after the metadata")
        }
        let end = try audioEnd(file, audioStart: offset, info: info)
        // 0 is "unknown" (an encoder writing to a pipe cannot go back to fill it in): the
        // last frame says how long the audio is.
        var samples = info.totalSamples
        if samples == 0 {
            guard let end, end > 0 else { throw AudioFile.ReadError("FLAC STREAMINFO does not give the length, and no last frame does") }
            samples = end
        } else if let end, end < samples {
            let rate = Double(info.sampleRate)
            throw AudioFile.ReadError(String(format: "truncated FLAC audio (it ends at %.1f s of %.1f s)", Double(end) / rate, Double(samples) / rate))
        }
        let metadata = AudioMetadata(format: .flac, tags: tags, samples: samples, sampleRate: info.sampleRate, hasCover: covers.found)
        return ParsedAudio(metadata: metadata, cover: covers.best)
    }

    static func streamInfo(_ bytes: [UInt8]) -> StreamInfo {
        // Bytes 10...17: 20 bits sample rate, 3 bits channels, 5 bits depth, 36 bits samples.
        let packed = Bytes.uintBE(bytes, 10, 8)
        return StreamInfo(maxBlockSize: Int(Bytes.uintBE(bytes, 2, 2)), maxFrameSize: Int(Bytes.uintBE(bytes, 7, 3)),
                          sampleRate: Int(packed >> 44), totalSamples: Int64(packed & 0xF_FFFF_FFFF))
    }

    /// Where the audio really ends, in samples: the end of the last frame header in the file's
    /// tail that a frame before it (or the audio's start) confirms; nil when none does. A
    /// half-copied file ends before STREAMINFO's length.
    static func audioEnd(_ file: FileReader, audioStart: Int, info: StreamInfo) throws(AudioFile.ReadError) -> Int64? {
        // STREAMINFO's frame size is the file's say (up to 16 MiB): three frames, at most 8 MiB
        // (frames of over 2.7 MB are not written; a file that says so is not read whole).
        let tailStart = max(audioStart, file.size - min(max(65_536, 3 * info.maxFrameSize), 8 << 20))
        let tail = try file.read(at: tailStart, count: file.size - tailStart)
        // Unconfirmed headers by first sample, the one nearest the end kept: looked up per
        // header, so a tail of crafted headers costs their number, not its square.
        var found: [Int64: Int] = [:]
        var index = tail.count - 2
        while index >= 0 {
            defer { index -= 1 }
            guard tail[index] == 0xFF, tail[index + 1] & 0xFE == 0xF8,
                  let frame = frameHeader(tail, at: index, fixedBlockSize: info.maxBlockSize) else { continue }
            // Frame data can imitate a header: trust a header once the frame before it ends
            // where it starts, or when it is the very first frame.
            let next = frame.first + Int64(frame.blockSize)
            if let blockSize = found[next] {
                return next + Int64(blockSize)
            } else if tailStart + index == audioStart {
                return next
            } else if found[frame.first] == nil {
                found[frame.first] = frame.blockSize
            }
        }
        return nil
    }

    /// A frame header at `at` that passes its CRC-8: its first sample and block size.
    static func frameHeader(_ bytes: [UInt8], at start: Int, fixedBlockSize: Int) -> (first: Int64, blockSize: Int)? {
        guard start + 5 <= bytes.count else { return nil }
        let sizeCode = Int(bytes[start + 2] >> 4), rateCode = bytes[start + 2] & 0x0F
        let channels = bytes[start + 3] >> 4, depth = (bytes[start + 3] >> 1) & 7
        guard sizeCode != 0, rateCode != 15, channels <= 10, depth != 3, bytes[start + 3] & 1 == 0 else { return nil }
        // The frame or sample number, coded like UTF-8 (up to 7 bytes).
        var position = start + 4
        let lead = bytes[position]
        let extra = lead < 0x80 ? 0 : lead < 0xC0 ? -1 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : lead < 0xF8 ? 3 : lead < 0xFC ? 4 : lead < 0xFE ? 5 : lead == 0xFE ? 6 : -1
        guard extra >= 0, position + 1 + extra <= bytes.count else { return nil }
        var number = UInt64(extra == 0 ? lead : lead & (0x7F >> (extra + 1)))
        for offset in stride(from: 1, through: extra, by: 1) {
            let byte = bytes[position + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            number = number << 6 | UInt64(byte & 0x3F)
        }
        position += 1 + extra
        var blockSize: Int
        switch sizeCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (sizeCode - 2)
        case 6, 7:
            let width = sizeCode - 5
            guard position + width <= bytes.count else { return nil }
            blockSize = Int(Bytes.uintBE(bytes, position, width)) + 1
            position += width
        default: blockSize = 256 << (sizeCode - 8)
        }
        position += rateCode == 12 ? 1 : (rateCode == 13 || rateCode == 14) ? 2 : 0
        guard position < bytes.count, crc8(bytes[start..<position]) == bytes[position] else { return nil }
        let variable = bytes[start + 1] & 1 == 1
        return (variable ? Int64(number) : Int64(number) * Int64(fixedBlockSize), blockSize)
    }

    static func crc8(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }
}
