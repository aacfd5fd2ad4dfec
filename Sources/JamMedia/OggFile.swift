import Foundation

/// Reads Ogg Vorbis and Ogg Opus: the identification header (sample rate, Opus pre-skip),
/// the comment header (tags and METADATA_BLOCK_PICTURE covers), and the length from the
/// granule position of the stream's last page. Page CRCs are not checked: a page counts
/// when its structure holds, so a flipped bit in the audio does not hide a whole file.
enum OggFile {
    struct Page {
        var offset: Int
        /// 1 continues a packet, 2 begins a stream, 4 ends it.
        var flags: UInt8
        var granule: Int64
        var serial: UInt32
        var lacing: [UInt8]
        var bodyOffset: Int
        var end: Int
    }

    enum Codec { case vorbis, opus }

    /// A stream's header packets are bounded so a corrupt lacing run cannot eat memory.
    static let maxHeaderBytes = 64 << 20

    static func read(_ file: FileReader, cover: Bool) throws(AudioFile.ReadError) -> ParsedAudio {
        var stream: (serial: UInt32, codec: Codec)?
        var foreign: String?
        var packets: [[UInt8]] = []
        var partial: [UInt8] = []
        var offset = 0
        while packets.count < 2 {
            var next = try page(file, at: offset)
            if next == nil { next = try resync(file, after: offset) }
            guard let found = next else { break }
            guard found.end <= file.size else { throw AudioFile.ReadError("truncated Ogg page") }
            offset = found.end
            if found.flags & 2 != 0, stream == nil {
                let first = try file.read(at: found.bodyOffset, count: min(16, found.end - found.bodyOffset))
                if Bytes.match(first, 0, "\u{01}vorbis") { stream = (found.serial, .vorbis) }
                else if Bytes.match(first, 0, "OpusHead") { stream = (found.serial, .opus) }
                else { foreign = foreign ?? codecName(first) }
            }
            guard let stream, found.serial == stream.serial else { continue }
            let body = try file.bytes(at: found.bodyOffset, count: found.end - found.bodyOffset, what: "Ogg page")
            var position = 0
            for length in found.lacing.map(Int.init) {
                partial += body[position..<position + length]
                position += length
                guard partial.count <= maxHeaderBytes else { throw AudioFile.ReadError("Ogg header packet too large") }
                if length < 255 {
                    packets.append(partial)
                    partial = []
                }
            }
        }
        guard let stream else {
            throw AudioFile.ReadError(foreign.map { "Ogg file of \($0) (only Vorbis and Opus are read)" } ?? "no Vorbis or Opus stream in the Ogg file")
        }
        guard packets.count >= 2 else { throw AudioFile.ReadError("truncated Ogg headers (no comment packet)") }
        var covers = CoverPicker(wanted: cover)
        let name = stream.codec == .vorbis ? "Vorbis" : "Opus"
        var ident = ByteReader(packets[0], what: "\(name) identification header")
        var comment = ByteReader(packets[1], what: "\(name) comment header")
        let sampleRate: Int, preSkip: Int64
        switch stream.codec {
        case .vorbis:
            try ident.skip(7 + 4 + 1) // packet type, "vorbis", version, channels
            sampleRate = Int(try ident.u32le())
            preSkip = 0
            guard Bytes.match(packets[1], 0, "\u{03}vorbis") else { throw AudioFile.ReadError("Vorbis comment header missing") }
            try comment.skip(7)
        case .opus:
            try ident.skip(8 + 1 + 1) // "OpusHead", version, channels
            preSkip = Int64(try ident.u16le())
            sampleRate = 48_000 // Opus always decodes at 48 kHz, whatever the input rate was
            guard Bytes.match(packets[1], 0, "OpusTags") else { throw AudioFile.ReadError("OpusTags header missing") }
            try comment.skip(8)
        }
        guard sampleRate > 0 else { throw AudioFile.ReadError("\(name) header gives no sample rate") }
        let tags = try VorbisComment.parse(&comment, covers: &covers)
        guard let granule = try lastGranule(file, serial: stream.serial, after: offset) else {
            throw AudioFile.ReadError("no Ogg audio pages")
        }
        let metadata = AudioMetadata(format: stream.codec == .vorbis ? .vorbis : .opus, tags: tags,
                                     samples: granule - preSkip, sampleRate: sampleRate, hasCover: covers.found)
        return ParsedAudio(metadata: metadata, cover: covers.best)
    }

    /// The page whose header is at `offset`, or nil when there is none (or only part of one).
    static func page(_ file: FileReader, at offset: Int) throws(AudioFile.ReadError) -> Page? {
        let header = try file.read(at: offset, count: 27)
        guard header.count == 27, Bytes.match(header, 0, "OggS"), header[4] == 0 else { return nil }
        let lacing = try file.read(at: offset + 27, count: Int(header[26]))
        guard lacing.count == Int(header[26]) else { return nil }
        let bodyOffset = offset + 27 + lacing.count
        var reader = ByteReader(header, at: 6, what: "Ogg page")
        let granule = Int64(bitPattern: try reader.u64le())
        let serial = try reader.u32le()
        return Page(offset: offset, flags: header[5], granule: granule, serial: serial, lacing: lacing,
                    bodyOffset: bodyOffset, end: bodyOffset + lacing.reduce(0) { $0 + Int($1) })
    }

    /// The next page after damage at `offset`, found by its capture pattern.
    static func resync(_ file: FileReader, after offset: Int) throws(AudioFile.ReadError) -> Page? {
        var from = offset + 1
        while let candidate = try file.find(Array("OggS".utf8), from: from, before: file.size) {
            if let page = try page(file, at: candidate) { return page }
            from = candidate + 1
        }
        return nil
    }

    /// The granule position of the stream's last complete page, searched backwards from the
    /// end. Without CRCs, a page counts when it ends the file or another page follows it.
    static func lastGranule(_ file: FileReader, serial: UInt32, after start: Int) throws(AudioFile.ReadError) -> Int64? {
        let capture = Array("OggS".utf8)
        var windowEnd = file.size
        while windowEnd > start {
            let windowStart = max(start, windowEnd - 60_000)
            // Three more bytes, so a capture pattern straddling the window's end is seen.
            let bytes = try file.read(at: windowStart, count: windowEnd - windowStart + 3)
            var index = min(windowEnd - windowStart - 1, bytes.count - 4)
            while index >= 0 {
                defer { index -= 1 }
                guard bytes[index] == capture[0], bytes[index..<index + 4].elementsEqual(capture),
                      let page = try page(file, at: windowStart + index), page.serial == serial,
                      page.granule >= 0, page.end <= file.size else { continue }
                if page.end == file.size { return page.granule }
                if Bytes.match(try file.read(at: page.end, count: 4), 0, "OggS") { return page.granule }
            }
            windowEnd = windowStart
        }
        return nil
    }

    static func codecName(_ packet: [UInt8]) -> String {
        if Bytes.match(packet, 1, "FLAC") { return "FLAC" }
        if Bytes.match(packet, 0, "Speex") { return "Speex" }
        if Bytes.match(packet, 1, "theora") { return "Theora video" }
        return "an unknown codec"
    }
}
