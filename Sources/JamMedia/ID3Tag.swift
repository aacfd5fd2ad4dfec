import Foundation

/// ID3v2.2, v2.3 and v2.4 tags (the front of MP3 and ADTS files): title, artist, album
/// and the attached picture.
enum ID3v2 {
    struct Result {
        var tags = Tags()
        var covers: CoverPicker
    }

    /// The whole size of the tag at `offset` (header, frames, padding, footer), or 0 when
    /// there is no tag there.
    static func totalSize(_ file: FileReader, at offset: Int) throws(AudioFile.ReadError) -> Int {
        let header = try file.read(at: offset, count: 10)
        guard header.count == 10, Bytes.match(header, 0, "ID3"), header[3] != 0xFF else { return 0 }
        let footer = header[3] >= 4 && header[5] & 0x10 != 0 ? 10 : 0
        return 10 + syncsafe(header, 6) + footer
    }

    /// Reads consecutive tags from `offset` (some files carry more than one); returns their
    /// tags and where the audio starts.
    static func read(_ file: FileReader, at offset: Int, covers: CoverPicker) throws(AudioFile.ReadError) -> (Result, end: Int) {
        var result = Result(covers: covers)
        var position = offset
        while true {
            let size = try totalSize(file, at: position)
            guard size > 0 else { break }
            guard position + size <= file.size else { throw AudioFile.ReadError("truncated ID3v2 tag") }
            let tag = try parse(try file.bytes(at: position, count: size, what: "ID3v2 tag"), covers: result.covers)
            result.covers = tag.covers
            result.tags.fillGaps(from: tag.tags)
            position += size
        }
        return (result, position)
    }

    /// Parses one whole tag, header included.
    static func parse(_ tag: [UInt8], covers: CoverPicker) throws(AudioFile.ReadError) -> Result {
        var result = Result(covers: covers)
        guard tag.count >= 10, Bytes.match(tag, 0, "ID3") else { throw AudioFile.ReadError("truncated ID3v2 tag") }
        let version = tag[3], flags = tag[5]
        guard (2...4).contains(version) else { return result } // an unknown version: skip it, keep the audio
        let size = min(syncsafe(tag, 6), tag.count - 10)
        // v2.2 and v2.3 unsynchronise the whole tag; v2.4 does it frame by frame.
        var body = Array(tag[10..<10 + size])
        if flags & 0x80 != 0, version < 4 { body = Bytes.resynchronised(body) }
        var reader = ByteReader(body, what: "ID3v2 tag")
        if flags & 0x40 != 0 {
            switch version {
            case 2: return result // v2.2 compression was never defined; such tags cannot be read
            case 3: try reader.skip(Int(try reader.u32be())) // the size leaves itself out
            default: try reader.skip(syncsafe(try reader.read(4), 0) - 4)
            }
        }
        let idLength = version == 2 ? 3 : 4, headerLength = version == 2 ? 6 : 10
        var tags = Tags()
        while reader.remaining >= headerLength {
            let header = try reader.read(headerLength)
            // Padding (zeros) or garbage ends the frames.
            guard header.prefix(idLength).allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { break }
            let id = TagText.latin1(header.prefix(idLength))
            var length = Int(Bytes.uintBE(header, idLength, idLength))
            if version == 4 { length = frameSize4(header, body: body, at: reader.position) }
            guard length <= reader.remaining else { throw AudioFile.ReadError("truncated ID3v2 \(id) frame") }
            var data = try reader.read(length)
            if version >= 3 {
                let format = header[9]
                // v2.3: 0x80 zlib, 0x40 encrypted, 0x20 group byte; v2.4: 0x08 zlib, 0x04
                // encrypted, 0x40 group byte, 0x02 unsynchronised, 0x01 length prefix.
                let compressedOrEncrypted = version == 3 ? format & 0xC0 != 0 : format & 0x0C != 0
                guard !compressedOrEncrypted else { continue }
                var skip = version == 3 ? (format & 0x20 != 0 ? 1 : 0) : (format & 0x40 != 0 ? 1 : 0)
                if version == 4, format & 0x02 != 0 || flags & 0x80 != 0 { data = Bytes.resynchronised(data) }
                if version == 4, format & 0x01 != 0 { skip += 4 }
                data = Array(data.dropFirst(skip))
            }
            switch id {
            case "TIT2", "TT2": tags.title = text(data)
            case "TPE1", "TP1": tags.artist = text(data)
            case "TALB", "TAL": tags.album = text(data)
            case "TPE2", "TP2": tags.albumArtist = text(data)
            case "APIC", "PIC": try result.covers.offer { () throws(AudioFile.ReadError) in try picture(data, v22: id == "PIC") }
            default: break
            }
        }
        result.tags = tags
        return result
    }

    /// A v2.4 frame size: syncsafe by the standard, but some writers (old iTunes) store
    /// plain integers; take whichever lands on the next frame or the end of the tag.
    static func frameSize4(_ header: [UInt8], body: [UInt8], at dataStart: Int) -> Int {
        let safe = syncsafe(header, 4), plain = Int(Bytes.uintBE(header, 4, 4))
        if header[4...7].contains(where: { $0 >= 0x80 }) { return plain }
        guard safe != plain else { return safe }
        func landsWell(_ size: Int) -> Bool {
            let next = dataStart + size
            guard next + 4 <= body.count else { return next <= body.count }
            return body[next] == 0 || body[next..<next + 4].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
        }
        return landsWell(safe) || !landsWell(plain) ? safe : plain
    }

    /// A text frame: an encoding byte, then one or more NUL-separated strings.
    static func text(_ data: [UInt8]) -> String? {
        guard let encoding = data.first else { return nil }
        let values = strings(Array(data.dropFirst()), encoding: encoding).compactMap { TagText.clean($0) }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Splits at the encoding's NUL (two aligned zero bytes for UTF-16) and decodes.
    static func strings(_ bytes: [UInt8], encoding: UInt8) -> [String] {
        let wide = encoding == 1 || encoding == 2
        var parts: [[UInt8]] = []
        var current: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if wide, index + 1 < bytes.count, bytes[index] == 0, bytes[index + 1] == 0 {
                parts.append(current); current = []; index += 2
            } else if !wide, bytes[index] == 0 {
                parts.append(current); current = []; index += 1
            } else if wide, index + 1 < bytes.count {
                current += [bytes[index], bytes[index + 1]]; index += 2
            } else {
                current.append(bytes[index]); index += 1
            }
        }
        parts.append(current)
        return parts.map { decode($0, encoding: encoding) }
    }

    static func decode(_ bytes: [UInt8], encoding: UInt8) -> String {
        switch encoding {
        case 1: TagText.utf16(bytes, bigEndian: false) // a BOM is required; little-endian is the usual habit without one
        case 2: TagText.utf16(bytes, bigEndian: true)
        case 3: TagText.utf8(bytes)
        default: TagText.latin1(bytes)
        }
    }

    /// APIC (v2.3/2.4: MIME type) or PIC (v2.2: three-letter format): the type and image.
    static func picture(_ data: [UInt8], v22: Bool) throws(AudioFile.ReadError) -> (type: Int?, cover: CoverArt?) {
        var reader = ByteReader(data, what: v22 ? "ID3v2 PIC frame" : "ID3v2 APIC frame")
        let encoding = try reader.u8()
        let mime: String
        if v22 {
            mime = TagText.latin1(try reader.read(3))
        } else {
            let end = data[reader.position...].firstIndex(of: 0) ?? data.count
            mime = TagText.latin1(try reader.read(end - reader.position))
            try reader.skip(1)
        }
        let type = Int(try reader.u8())
        // The description ends with the encoding's NUL: one byte, or two aligned ones.
        let wide = encoding == 1 || encoding == 2
        while true {
            if wide {
                let pair = try reader.read(2)
                if pair == [0, 0] { break }
            } else if try reader.u8() == 0 {
                break
            }
        }
        // "-->" means the picture is only linked by URL.
        guard mime != "-->" else { return (type, nil) }
        return (type, CoverArt(bytes: try reader.read(reader.remaining), declared: mime))
    }

    /// A 28-bit integer stored 7 bits per byte.
    static func syncsafe(_ bytes: [UInt8], _ offset: Int) -> Int {
        guard offset + 4 <= bytes.count else { return 0 }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
    }
}

/// The 128-byte ID3v1 tag at the very end of an MP3: a fallback for the fields ID3v2 lacks.
enum ID3v1 {
    /// The tag, if the file ends with one.
    static func read(_ file: FileReader) throws(AudioFile.ReadError) -> Tags? {
        guard file.size >= 128 else { return nil }
        let tag = try file.bytes(at: file.size - 128, count: 128, what: "ID3v1 tag")
        guard Bytes.match(tag, 0, "TAG") else { return nil }
        func field(_ start: Int) -> String? {
            TagText.clean(TagText.latin1(tag[start..<start + 30].prefix { $0 != 0 }))
        }
        return Tags(title: field(3), artist: field(33), album: field(63))
    }
}
