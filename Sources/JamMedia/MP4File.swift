import Foundation

/// Reads MP4/M4A audio: walks the top-level atoms (seeking past `mdat`), then parses
/// `moov` in memory: the sound track's timing, edit list and codec, and the iTunes tags in
/// `udta/meta/ilst` (©nam, ©ART, ©alb, aART, covr, and iTunSMPB for the AAC priming).
enum MP4File {
    struct Atom {
        var type: String
        var body: Int
        var end: Int
    }

    /// `moov` holds tables and tags, not audio; more than this means a broken size field.
    static let maxMoovBytes = 64 << 20

    static func read(_ file: FileReader, cover: Bool) throws(AudioFile.ReadError) -> ParsedAudio {
        var position = 0
        var moov: [UInt8]?
        while position + 8 <= file.size {
            let header = try file.read(at: position, count: 16)
            let (type, headerLength, size) = try atomHeader(header, at: 0, available: file.size - position)
            if size > file.size - position {
                throw AudioFile.ReadError(type == "mdat" ? "truncated MP4 (the audio data runs past the end of the file)" : "truncated MP4 \(type) atom")
            }
            if type == "moov" {
                guard size <= maxMoovBytes else { throw AudioFile.ReadError("MP4 moov atom too large (\(size) bytes)") }
                moov = try file.bytes(at: position + headerLength, count: size - headerLength, what: "MP4 moov atom")
            }
            position += size
        }
        guard let moov else { throw AudioFile.ReadError("no moov atom (an incomplete MP4?)") }
        return try parseMoov(moov, cover: cover)
    }

    /// Type, header length and whole size of the atom at `offset`; `available` bytes remain
    /// from there (a size of 0 means "to the end").
    static func atomHeader(_ bytes: [UInt8], at offset: Int, available: Int) throws(AudioFile.ReadError) -> (String, Int, Int) {
        guard offset + 8 <= bytes.count else { throw AudioFile.ReadError("truncated MP4 atom header") }
        let type = Bytes.fourCC(bytes, offset + 4)
        var size = Int(Bytes.uintBE(bytes, offset, 4)), headerLength = 8
        if size == 1 {
            guard offset + 16 <= bytes.count else { throw AudioFile.ReadError("truncated MP4 \(type) atom header") }
            size = Int(clamping: Bytes.uintBE(bytes, offset + 8, 8))
            headerLength = 16
        } else if size == 0 {
            size = available
        }
        guard size >= headerLength else { throw AudioFile.ReadError("corrupt MP4 (the \(type) atom claims \(size) bytes)") }
        return (type, headerLength, size)
    }

    /// The atoms between `start` and `end` of `bytes`.
    static func children(_ bytes: [UInt8], from start: Int, to end: Int) throws(AudioFile.ReadError) -> [Atom] {
        var atoms: [Atom] = []
        var position = start
        while position + 8 <= end {
            let (type, headerLength, size) = try atomHeader(bytes, at: position, available: end - position)
            guard size <= end - position else { throw AudioFile.ReadError("truncated MP4 \(type) atom") }
            atoms.append(Atom(type: type, body: position + headerLength, end: position + size))
            position += size
        }
        return atoms
    }

    static func children(_ bytes: [UInt8], of atom: Atom, skipping: Int = 0) throws(AudioFile.ReadError) -> [Atom] {
        try children(bytes, from: min(atom.body + skipping, atom.end), to: atom.end)
    }

    /// The atom at `path` below `atom`.
    static func find(_ bytes: [UInt8], _ path: [String], in atom: Atom) throws(AudioFile.ReadError) -> Atom? {
        var current = atom
        for type in path {
            // `meta` is a full box (4 bytes of version and flags) in ISO files, not in QuickTime ones.
            let skip = current.type == "meta" && Bytes.fourCC(bytes, current.body + 4) != "hdlr" ? 4 : 0
            guard let next = try children(bytes, of: current, skipping: skip).first(where: { $0.type == type }) else { return nil }
            current = next
        }
        return current
    }

    static func reader(_ bytes: [UInt8], _ atom: Atom) -> ByteReader {
        ByteReader(Array(bytes[atom.body..<atom.end]), what: "MP4 \(atom.type) atom")
    }

    /// `mvhd` or `mdhd`: time scale and duration, in version 0 (32-bit) or 1 (64-bit) form.
    static func timing(_ bytes: [UInt8], _ atom: Atom) throws(AudioFile.ReadError) -> (scale: Int64, duration: Int64) {
        var reader = reader(bytes, atom)
        let version = try reader.u8()
        try reader.skip(3 + (version == 1 ? 16 : 8))
        let scale = Int64(try reader.u32be())
        let duration = version == 1 ? try reader.u64be() : UInt64(try reader.u32be())
        // All ones means "unknown".
        let unknown = duration == (version == 1 ? UInt64.max : UInt64(UInt32.max))
        return (scale, unknown ? 0 : Int64(clamping: duration))
    }

    /// The edit list: the summed length of its non-empty edits (movie time scale) and
    /// where the first one starts in the media, i.e. the encoder priming it skips.
    static func edits(_ bytes: [UInt8], _ atom: Atom) throws(AudioFile.ReadError) -> (duration: Int64, mediaStart: Int64) {
        var reader = reader(bytes, atom)
        let version = try reader.u8()
        try reader.skip(3)
        var duration: Int64 = 0, mediaStart: Int64 = -1
        for _ in 0..<(try reader.u32be()) {
            let width = version == 1 ? 8 : 4
            let segment = Int64(clamping: try reader.uintBE(width))
            let raw = try reader.uintBE(width)
            let time = version == 1 ? Int64(bitPattern: raw) : Int64(Int32(truncatingIfNeeded: raw))
            try reader.skip(4)
            guard time != -1 else { continue } // an empty edit: a pause before the media starts
            duration = min(duration, Int64.max - segment) + segment
            if mediaStart < 0 { mediaStart = time }
        }
        return (duration, max(0, mediaStart))
    }

    static func parseMoov(_ moov: [UInt8], cover: Bool) throws(AudioFile.ReadError) -> ParsedAudio {
        let root = Atom(type: "moov", body: 0, end: moov.count)
        let atoms = try children(moov, of: root)
        let movie = try atoms.first { $0.type == "mvhd" }.map { (atom) throws(AudioFile.ReadError) in try timing(moov, atom) }
        var sound: Atom?
        for trak in atoms where trak.type == "trak" {
            if let handler = try find(moov, ["mdia", "hdlr"], in: trak), Bytes.fourCC(moov, handler.body + 8) == "soun" {
                sound = trak
                break
            }
        }
        guard let sound else { throw AudioFile.ReadError("MP4 without an audio track") }
        guard let mdhd = try find(moov, ["mdia", "mdhd"], in: sound) else { throw AudioFile.ReadError("MP4 audio track without mdhd") }
        let media = try timing(moov, mdhd)
        let edit = try find(moov, ["edts", "elst"], in: sound).map { (atom) throws(AudioFile.ReadError) in try edits(moov, atom) }
        // Muxers set an audio track's time scale to its sample rate; the sample entry's
        // 16.16 rate is the fallback, as it cannot hold rates above 65 535.
        var sampleRate = Int(media.scale)
        if !(8000...384_000).contains(sampleRate), let stsd = try find(moov, ["mdia", "minf", "stbl", "stsd"], in: sound),
           stsd.body + 8 + 36 <= stsd.end {
            sampleRate = Int(Bytes.uintBE(moov, stsd.body + 8 + 32, 2))
        }
        var covers = CoverPicker(wanted: cover)
        var tags = Tags()
        var smpb: String?
        var ilst = try find(moov, ["udta", "meta", "ilst"], in: root)
        if ilst == nil { ilst = try find(moov, ["meta", "ilst"], in: root) }
        let items = if let ilst { try children(moov, of: ilst) } else { [Atom]() }
        for item in items {
            let parts = try children(moov, of: item)
            // A freeform item's name is read once per item, not once per value: a crafted item
            // with many values must not cost their square.
            let isSMPB = item.type == "----" && parts.first { $0.type == "name" }.map {
                TagText.utf8(moov[min($0.body + 4, $0.end)..<$0.end]) == "iTunSMPB"
            } == true
            for data in parts where data.type == "data" && data.end - data.body >= 8 {
                let kind = Bytes.uintBE(moov, data.body, 4) & 0xFF_FFFF
                let value = moov[(data.body + 8)..<data.end]
                func text() -> String? { TagText.clean(kind == 2 ? TagText.utf16(Array(value), bigEndian: true) : TagText.utf8(value)) }
                switch item.type {
                case "\u{A9}nam": tags.title = tags.title ?? text()
                case "\u{A9}ART": tags.artist = tags.artist ?? text()
                case "\u{A9}alb": tags.album = tags.album ?? text()
                case "aART": tags.albumArtist = tags.albumArtist ?? text()
                case "covr":
                    let declared = kind == 13 ? "image/jpeg" : kind == 14 ? "image/png" : kind == 27 ? "image/bmp" : nil
                    try covers.offer { () throws(AudioFile.ReadError) in (nil, CoverArt(bytes: Array(value), declared: declared)) }
                case "----" where isSMPB: smpb = text()
                default: break
                }
            }
        }
        let ms: Int64
        if let samples = smpbSamples(smpb), media.scale > 0 {
            ms = AudioMetadata.milliseconds(samples, per: media.scale)
        } else if let edit, edit.duration > 0, let movie, movie.scale > 0 {
            ms = AudioMetadata.milliseconds(edit.duration, per: movie.scale)
        } else if media.scale > 0, media.duration > 0 {
            ms = AudioMetadata.milliseconds(media.duration - (edit?.mediaStart ?? 0), per: media.scale)
        } else if let movie, movie.scale > 0, movie.duration > 0 {
            ms = AudioMetadata.milliseconds(movie.duration, per: movie.scale)
        } else {
            throw AudioFile.ReadError("MP4 gives no length (fragmented MP4 is not supported)")
        }
        let metadata = AudioMetadata(format: .mp4, title: tags.title, artist: tags.artist ?? tags.albumArtist, album: tags.album,
                                     durationMs: ms, sampleRate: sampleRate, hasCover: covers.found)
        return ParsedAudio(metadata: metadata, cover: covers.best)
    }

    /// iTunSMPB (" 00000000 00000840 000001CA 00000000000AC440 …", hex): priming,
    /// padding, then the number of real samples.
    static func smpbSamples(_ text: String?) -> Int64? {
        guard let fields = text?.split(separator: " "), fields.count >= 4, let samples = Int64(fields[3], radix: 16), samples > 0 else { return nil }
        return samples
    }
}
