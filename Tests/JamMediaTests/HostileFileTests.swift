import Foundation
import JamMedia
import JamTestSupport
import Testing

/// Files made to hurt the reader: a scan must get through them in about the time their size
/// takes to read, not its square, and a link must not lead out of the music folder.
@Suite(.timeLimit(.minutes(1))) struct HostileFileTests {
    static func atom(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + body
    }

    /// `bytes` with `inserted` put at `offset`, and the 32-bit sizes of the atoms starting at
    /// `parents` (each of which holds `offset`) made to count it.
    static func inserting(_ inserted: [UInt8], at offset: Int, into bytes: [UInt8], parents: [Int]) -> [UInt8] {
        var result = bytes
        for parent in parents {
            let size = result[parent..<parent + 4].reduce(0) { $0 << 8 | UInt32($1) } + UInt32(inserted.count)
            result.replaceSubrange(parent..<parent + 4, with: withUnsafeBytes(of: size.bigEndian, Array.init))
        }
        result.insert(contentsOf: inserted, at: offset)
        return result
    }

    /// The atoms from `root` down through `path`: each one's offset.
    static func path(_ path: [String], in bytes: [UInt8]) throws -> [Int] {
        var offsets: [Int] = []
        var start = 0, end = bytes.count
        for type in path {
            var position = start
            var found: Int?
            while position + 8 <= end {
                let size = Int(bytes[position..<position + 4].reduce(0) { $0 << 8 | UInt32($1) })
                if String(decoding: bytes[position + 4..<position + 8], as: UTF8.self) == type { found = position; break }
                position += max(size, 8)
            }
            let atom = try #require(found, "no \(type) atom")
            offsets.append(atom)
            let size = Int(bytes[atom..<atom + 4].reduce(0) { $0 << 8 | UInt32($1) })
            start = atom + 8 + (type == "meta" ? 4 : 0)
            end = atom + size
        }
        return offsets
    }

    @Test func aTagItemWithManyValuesIsReadInOnePass() throws {
        let original = [UInt8](try MediaFixtures.data("tone.m4a"))
        let parents = try Self.path(["moov", "udta", "meta", "ilst"], in: original)
        // A freeform item with 60,000 values: each read its item's name again before.
        let value = Self.atom("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array("abcd".utf8))
        let name = Self.atom("name", [0, 0, 0, 0] + Array("comment".utf8))
        let item = Self.atom("----", Array(repeating: value, count: 60_000).flatMap { $0 } + name)
        let ilst = parents[3]
        let ilstEnd = ilst + Int(original[ilst..<ilst + 4].reduce(0) { $0 << 8 | UInt32($1) })
        let crafted = Self.inserting(item, at: ilstEnd, into: original, parents: parents)
        let read = try AudioFile.read(bytes: crafted)
        let plain = try AudioFile.read(bytes: original)
        #expect(read.metadata.durationMs == plain.metadata.durationMs)
        #expect(read.metadata.title == plain.metadata.title)
    }

    /// CRC-8 (x^8 + x^2 + x + 1), as FLAC frame headers carry it.
    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? crc << 1 ^ 0x07 : crc << 1 }
        }
        return crc
    }

    @Test func aFLACTailOfImitatedFrameHeadersIsReadInOnePass() throws {
        var flac = [UInt8](try MediaFixtures.data("tone.flac"))
        let plain = try AudioFile.read(bytes: flac)
        // STREAMINFO's largest frame made 16 MiB (the whole file was searched), then 300,000
        // frame headers that all say "sample 0" and never confirm each other.
        flac.replaceSubrange(8 + 7..<8 + 10, with: [0xFF, 0xFF, 0xFF])
        let header: [UInt8] = [0xFF, 0xF8, 0x10, 0x00, 0x00]
        let fake = header + [Self.crc8(header)]
        flac += Array(repeating: fake, count: 300_000).flatMap { $0 }
        #expect(try AudioFile.read(bytes: flac).metadata.durationMs == plain.metadata.durationMs)
    }

    @Test func aFLACOfUnknownLengthTakesItFromItsLastFrame() throws {
        var flac = [UInt8](try MediaFixtures.data("tone.flac"))
        let plain = try AudioFile.read(bytes: flac)
        // STREAMINFO's total samples (the low 36 bits of its bytes 10...17) set to 0,
        // "unknown", as an encoder writing to a pipe leaves it.
        flac[8 + 13] &= 0xF0
        for index in 8 + 14..<8 + 18 { flac[index] = 0 }
        let read = try AudioFile.read(bytes: flac)
        #expect(read.metadata.durationMs == plain.metadata.durationMs)
        #expect(read.metadata.durationMs > 0)
        // Cut: no last frame to say, so no made-up length.
        let cut = Array(flac.prefix(flac.count - 3000))
        #expect(try AudioFile.read(bytes: cut).metadata.durationMs < plain.metadata.durationMs)
    }

    @Test func linksInTheMusicFolderAreNotFollowedButALinkedMusicFolderIsWalked() throws {
        let outside = try TestFolders.make("outside")
        let secret = outside.appendingPathComponent("secret.txt")
        try Data("not for members".utf8).write(to: secret)
        try FileManager.default.copyItem(at: MediaFixtures.url("tone.flac"), to: outside.appendingPathComponent("elsewhere.flac"))
        let folder = try MediaFixtures.folder(with: ["tone.wav"], label: "links")
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("cover.jpg"), withDestinationURL: secret)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("linked.flac"), withDestinationURL: outside.appendingPathComponent("elsewhere.flac"))

        let library = MusicLibrary.scan([folder])
        let wav = try #require(library.tracks.first)
        #expect(library.tracks.count == 1, "the linked FLAC is not a track")
        #expect(!wav.hasCover, "a link named cover.jpg is no cover")
        #expect(try AudioFile.coverArt(wav.file) == nil)
        #expect(library.problems.contains { $0.file.lastPathComponent == "linked.flac" && $0.reason.contains("link") })

        // The folder itself a link (to a mounted disk, say): walked where it leads.
        let parent = try TestFolders.make("linked-root")
        let link = parent.appendingPathComponent("Music")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
        let throughLink = MusicLibrary.scan([link])
        #expect(throughLink.tracks.map(\.id) == library.tracks.map(\.id))
    }
}
