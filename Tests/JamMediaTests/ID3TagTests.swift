import Foundation
import JamTestSupport
import Testing
@testable import JamMedia

/// ID3v2 variants FFmpeg does not write (v2.2, unsynchronisation, UTF-16BE, extended
/// headers, iTunes' plain v2.4 sizes), built byte by byte.
@Suite struct ID3TagTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0xFF, 0x00, 0xFF, 0xFB, 0x90, 0xFF, 0xD9]

    static func syncsafe(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (7 * (3 - $0))) & 0x7F) } }
    static func be(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8((value >> (8 * (width - 1 - $0))) & 0xFF) } }
    static func tag(version: UInt8, flags: UInt8 = 0, _ body: [UInt8]) -> [UInt8] {
        Array("ID3".utf8) + [version, 0, flags] + syncsafe(body.count) + body
    }
    static func frame22(_ id: String, _ data: [UInt8]) -> [UInt8] { Array(id.utf8) + be(data.count, 3) + data }
    static func frame23(_ id: String, _ data: [UInt8]) -> [UInt8] { Array(id.utf8) + be(data.count, 4) + [0, 0] + data }
    static func frame24(_ id: String, _ data: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        Array(id.utf8) + syncsafe(data.count) + [0, flags] + data
    }
    /// Unsynchronisation as writers apply it: a zero after every FF.
    static func unsynchronised(_ bytes: [UInt8]) -> [UInt8] { bytes.flatMap { $0 == 0xFF ? [0xFF, 0x00] : [$0] } }
    static func latin1(_ text: String) -> [UInt8] { [0] + text.unicodeScalars.map { UInt8($0.value) } }
    static func utf16BE(_ text: String) -> [UInt8] { [2] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }
    static func utf16BOM(_ text: String, bigEndian: Bool) -> [UInt8] {
        let bom: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
        let units: [UInt8] = text.utf16.flatMap { (unit: UInt16) -> [UInt8] in
            let high = UInt8(unit >> 8), low = UInt8(unit & 0xFF)
            return bigEndian ? [high, low] : [low, high]
        }
        return [1] + bom + units
    }

    static func parse(_ tag: [UInt8]) throws -> ID3v2.Result {
        try ID3v2.parse(tag, covers: CoverPicker(wanted: true))
    }

    @Test func readsVersion22FramesAndPIC() throws {
        let picture: [UInt8] = [0] + Array("JPG".utf8) + [3] + [0] + Self.jpeg
        let body = Self.frame22("TT2", Self.latin1("Café")) + Self.frame22("TP1", Self.latin1("Old Band"))
            + Self.frame22("TAL", Self.latin1("Tape")) + Self.frame22("PIC", picture) + [0, 0, 0, 0]
        let result = try Self.parse(Self.tag(version: 2, body))
        #expect(result.tags == Tags(title: "Café", artist: "Old Band", album: "Tape"))
        #expect(result.covers.best == CoverArt(data: Data(Self.jpeg), mimeType: "image/jpeg"))
    }

    @Test func undoesWholeTagUnsynchronisationInVersion23() throws {
        let picture: [UInt8] = [0] + Array("image/jpeg".utf8) + [0, 3] + Array("front".utf8) + [0] + Self.jpeg
        let frames = Self.frame23("TIT2", Self.utf16BOM("Zoë ÿ", bigEndian: false)) + Self.frame23("APIC", picture)
        let result = try Self.parse(Self.tag(version: 3, flags: 0x80, Self.unsynchronised(frames)))
        #expect(result.tags.title == "Zoë ÿ")
        #expect(result.covers.best?.data == Data(Self.jpeg))
    }

    @Test func undoesPerFrameUnsynchronisationAndSkipsTheDataLengthInVersion24() throws {
        let picture: [UInt8] = [3] + Array("image/jpeg".utf8) + [0, 3, 0] + Self.jpeg
        let stored = Self.syncsafe(picture.count) + Self.unsynchronised(picture)
        let body = Self.frame24("TIT2", [3] + Array("Ünïcode".utf8)) + Self.frame24("APIC", stored, flags: 0x03)
        let result = try Self.parse(Self.tag(version: 4, body))
        #expect(result.tags.title == "Ünïcode")
        #expect(result.covers.best?.data == Data(Self.jpeg))
    }

    @Test func decodesEveryTextEncoding() throws {
        let body = Self.frame23("TIT2", Self.utf16BE("Smörgåsbord")) + Self.frame23("TPE1", Self.utf16BOM("Ålborg", bigEndian: true))
            + Self.frame23("TALB", Self.latin1("Crème brûlée"))
        let result = try Self.parse(Self.tag(version: 3, body))
        #expect(result.tags == Tags(title: "Smörgåsbord", artist: "Ålborg", album: "Crème brûlée"))
    }

    @Test func joinsTheValuesOfAMultiValueFrame() throws {
        let body = Self.frame24("TPE1", [3] + Array("One\0Two".utf8))
        #expect(try Self.parse(Self.tag(version: 4, body)).tags.artist == "One, Two")
    }

    @Test func skipsExtendedHeaders() throws {
        let v23 = [0, 0, 0, 6, 0, 0, 0, 0, 0, 0] + Self.frame23("TIT2", Self.latin1("Three"))
        #expect(try Self.parse(Self.tag(version: 3, flags: 0x40, v23)).tags.title == "Three")
        let v24 = Self.syncsafe(6) + [1, 0] + Self.frame24("TIT2", [3] + Array("Four".utf8))
        #expect(try Self.parse(Self.tag(version: 4, flags: 0x40, v24)).tags.title == "Four")
    }

    @Test func acceptsPlainSizesInVersion24() throws {
        // Old iTunes wrote v2.4 sizes as plain integers; 300 bytes read as syncsafe would be 172.
        let title = String(repeating: "x", count: 299)
        let plainFrame = Array("TIT2".utf8) + Self.be(300, 4) + [0, 0] + [3] + Array(title.utf8)
        let body = plainFrame + Self.frame24("TPE1", [3] + Array("After".utf8))
        let result = try Self.parse(Self.tag(version: 4, body))
        #expect(result.tags.title == title)
        #expect(result.tags.artist == "After")
    }

    @Test func prefersTheFrontCoverAmongPictures() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let back: [UInt8] = [0] + Array("image/png".utf8) + [0, 4, 0] + png
        let front: [UInt8] = [0] + Array("image/jpeg".utf8) + [0, 3, 0] + Self.jpeg
        let result = try Self.parse(Self.tag(version: 3, Self.frame23("APIC", back) + Self.frame23("APIC", front)))
        #expect(result.covers.best?.mimeType == "image/jpeg")
    }

    @Test func aFrameRunningPastTheTagIsAReason() throws {
        var body = Self.frame23("TIT2", Self.latin1("Cut"))
        body[7] = 200
        #expect(throws: AudioFile.ReadError("truncated ID3v2 TIT2 frame")) { try Self.parse(Self.tag(version: 3, body)) }
    }

    @Test func aVersion22TagInFrontOfMP3FramesIsReadWithTheAudio() throws {
        // The frames of a fixture, its own tags cut off, behind a hand-made v2.2 tag.
        let original = [UInt8](try MediaFixtures.data("cbr-noxing.mp3"))
        let frames = original[(10 + ID3v2.syncsafe(original, 6))..<(original.count - 128)]
        let picture: [UInt8] = [0] + Array("JPG".utf8) + [3, 0] + Self.jpeg
        let tag = Self.tag(version: 2, Self.frame22("TT2", Self.latin1("Vintage")) + Self.frame22("PIC", picture))
        let file = try TestFolders.make("id3v22").appendingPathComponent("vintage.mp3")
        try Data(tag + frames).write(to: file)
        let metadata = try AudioFile.read(file)
        #expect(metadata.title == "Vintage")
        #expect(metadata.artist == nil)
        #expect(metadata.hasCover)
        #expect(metadata.durationMs == (try AudioFile.read(MediaFixtures.url("cbr-noxing.mp3"))).durationMs)
        #expect(try AudioFile.embeddedCoverArt(file)?.data == Data(Self.jpeg))
    }
}
