import Foundation

/// Vorbis comments (`KEY=value` pairs, little-endian lengths), the tags of FLAC, Ogg
/// Vorbis and Ogg Opus, and the FLAC picture block they share for covers.
enum VorbisComment {
    /// Parses a comment block starting at `reader`'s position (after any packet magic).
    static func parse(_ reader: inout ByteReader, covers: inout CoverPicker) throws(AudioFile.ReadError) -> Tags {
        _ = try reader.lengthPrefixedLE() // vendor string
        let count = try reader.u32le()
        var fields: [String: [String]] = [:]
        // Each comment takes at least its 4-byte length, so a lying count ends in "truncated".
        for _ in 0..<count {
            let comment = try reader.lengthPrefixedLE()
            guard let equals = comment.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = TagText.latin1(comment[..<equals]).uppercased()
            let value = comment[(equals + 1)...]
            switch key {
            case "METADATA_BLOCK_PICTURE":
                try covers.offer { () throws(AudioFile.ReadError) in
                    guard let block = Data(base64Encoded: Data(value), options: .ignoreUnknownCharacters) else {
                        throw AudioFile.ReadError("undecodable METADATA_BLOCK_PICTURE (not base64)")
                    }
                    var picture = ByteReader([UInt8](block), what: "METADATA_BLOCK_PICTURE")
                    let parsed = try FLACPicture.parse(&picture)
                    return (parsed.type, parsed.cover)
                }
            case "COVERART":
                // The older, unofficial form: a bare base64 image, its type in COVERARTMIME.
                try covers.offer { () throws(AudioFile.ReadError) in
                    guard let image = Data(base64Encoded: Data(value), options: .ignoreUnknownCharacters) else {
                        throw AudioFile.ReadError("undecodable COVERART (not base64)")
                    }
                    return (nil, CoverArt(bytes: [UInt8](image), declared: fields["COVERARTMIME"]?.first))
                }
            default:
                if let text = TagText.clean(TagText.utf8(value)) { fields[key, default: []].append(text) }
            }
        }
        func joined(_ keys: String...) -> String? {
            keys.lazy.compactMap { fields[$0]?.joined(separator: ", ") }.first
        }
        return Tags(title: joined("TITLE"), artist: joined("ARTIST"), album: joined("ALBUM"),
                    albumArtist: joined("ALBUMARTIST", "ALBUM ARTIST"))
    }
}

/// The FLAC `PICTURE` metadata block, also carried base64 in Vorbis comments.
enum FLACPicture {
    /// The picture type (3 = front cover) and the image.
    static func parse(_ reader: inout ByteReader) throws(AudioFile.ReadError) -> (type: Int, cover: CoverArt) {
        let type = Int(try reader.u32be())
        let mimeLength = Int(try reader.u32be())
        let mime = TagText.latin1(try reader.read(mimeLength))
        let descriptionLength = Int(try reader.u32be())
        try reader.skip(descriptionLength + 16) // description, width, height, depth, colours
        let length = Int(try reader.u32be())
        return (type, CoverArt(bytes: try reader.read(length), declared: mime))
    }
}
