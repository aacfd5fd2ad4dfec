import Foundation
import JamMedia
import JamTestSupport
import Testing

/// The audio fixtures made by Fixtures/make_fixtures.sh, and what each one holds.
enum MediaFixtures {
    // #filePath, not bundle resources: works from the main package and from a symlinked test target.
    static func url(_ name: String, filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name)
    }

    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// The true length in seconds of each fixture's tone, as the script wrote it.
    static func lengths() throws -> [String: Double] {
        let text = try String(contentsOf: url("lengths.txt"), encoding: .utf8)
        var lengths: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let seconds = Double(parts[1]) { lengths[String(parts[0])] = seconds }
        }
        return lengths
    }

    /// A folder holding copies of `names`.
    static func folder(with names: [String], label: String) throws -> URL {
        let folder = try TestFolders.make(label)
        for name in names {
            try FileManager.default.copyItem(at: url(name), to: folder.appendingPathComponent(name))
        }
        return folder
    }
}

/// One fixture and the tags, format and cover the readers must find in it.
struct AudioFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let format: AudioFormat
    let title: String
    let artist: String
    let album: String
    let hasCover: Bool

    var testDescription: String { name }

    static let plain = ("Tone in A", "The Fixtures", "Test Signals")
    static let accented = ("Café", "Zoë & the Ünicode", "Smörgåsbord")

    init(_ name: String, _ format: AudioFormat, _ tags: (String, String, String), cover: Bool) {
        self.name = name
        self.format = format
        (title, artist, album) = tags
        hasCover = cover
    }

    static let all: [AudioFixture] = [
        AudioFixture("tone.wav", .wav, plain, cover: false),
        AudioFixture("tone.flac", .flac, accented, cover: true),
        AudioFixture("vbr-v24.mp3", .mp3, accented, cover: true),
        AudioFixture("cbr-v23-utf16.mp3", .mp3, accented, cover: true),
        AudioFixture("cbr-noxing.mp3", .mp3, plain, cover: false),
        AudioFixture("id3v1-mpeg25.mp3", .mp3, plain, cover: false),
        AudioFixture("vorbis.ogg", .vorbis, plain, cover: true),
        AudioFixture("vorbis-small-pages.oga", .vorbis, plain, cover: true),
        AudioFixture("tone.opus", .opus, accented, cover: true),
        AudioFixture("tone.m4a", .mp4, accented, cover: true),
        AudioFixture("tone.aac", .aac, plain, cover: false),
    ]
}
