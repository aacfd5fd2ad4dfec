import Foundation
import JamMedia
import JamTestSupport
import Testing

@Suite struct MusicLibraryTests {
    /// The demo library every test of this process shares (synthesised once).
    static func demoFolder() throws -> URL { try DemoFolder.shared() }

    static func demo() throws -> MusicLibrary {
        MusicLibrary.scan([try demoFolder()])
    }

    /// A private copy of the demo folder, for tests that change it.
    static func copyOfDemo() throws -> URL {
        let copy = TestFolders.path("demo-copy")
        try FileManager.default.copyItem(at: try demoFolder(), to: copy)
        return copy
    }

    @Test func theDemoLibraryHasADozenNamedPiecesWithTheirLengths() throws {
        let library = try Self.demo()
        #expect(library.tracks.count == 12)
        #expect(library.problems.isEmpty)
        let morning = try #require(library.tracks.first { $0.title == "Morning Light" })
        #expect(morning.artist == "The OpenJam Demo Band")
        #expect(morning.album == "Listen Together")
        #expect(abs(morning.durationMs - 24_000) <= 50)
        #expect(library.tracks.allSatisfy { $0.durationMs >= 20_000 && $0.contentType == "audio/wav" })
    }

    @Test func idsAreStableAcrossScans() throws {
        let folder = try Self.copyOfDemo()
        let first = MusicLibrary.scan([folder]).tracks.map(\.id)
        let second = MusicLibrary.scan([folder]).tracks.map(\.id)
        #expect(first == second)
        #expect(Set(first).count == 12)
    }

    @Test func searchIgnoresCaseAndAccentsAndMatchesWordPrefixes() throws {
        let library = try Self.demo()
        #expect(library.search("cafe").map(\.title) == ["Café au Lait"])
        #expect(library.search("CAFÉ AU").map(\.title) == ["Café au Lait"])
        #expect(library.search("night bu").map(\.title) == ["Night Bus"])
        #expect(library.search("light").map(\.title).sorted() == ["Harbour Lights", "Morning Light"])
        #expect(library.search("listen together").count == 12)
        #expect(library.search("nothing like this").isEmpty)
    }

    @Test func anApostropheJoinsAWordAndItsPartsStillFindIt() throws {
        let track = { (id: String, title: String) in
            LibraryTrack(
                id: id, title: title, artist: "Band", album: nil, durationMs: 1_000, file: URL(fileURLWithPath: "/music/\(id).wav"),
                contentType: "audio/wav", hasCover: false)
        }
        let library = MusicLibrary(tracks: [track("a", "Don't Stop"), track("b", "Rock \u{2019}n\u{2019} Roll"), track("c", "L'Amour")])
        #expect(library.search("dont stop").map(\.id) == ["a"])
        #expect(library.search("don't").map(\.id) == ["a"])
        #expect(library.search("DON\u{2019}T").map(\.id) == ["a"])
        #expect(library.search("rock n roll").map(\.id) == ["b"])
        // The part after an elision still finds its word.
        #expect(library.search("amour").map(\.id) == ["c"])
        #expect(library.search("l'amour").map(\.id) == ["c"])
        #expect(library.search("lamour").map(\.id) == ["c"])
    }

    @Test func aQueryCountsEachWordOnceAndOnlyItsFirstEight() throws {
        let library = try Self.demo()
        // A word said a hundred times is one word.
        #expect(library.search(Array(repeating: "night", count: 100).joined(separator: " ")).map(\.title) == ["Night Bus"])
        // Words past the eighth different one narrow nothing.
        let eight = "night bus a b c d e f"
        #expect(library.search(eight).isEmpty, "the demo has no track with all of these")
        #expect(library.search("night bus listen together n ni b bu zzz").map(\.title) == ["Night Bus"])
        #expect(library.search("night bus listen together n ni b zzz").isEmpty, "zzz is the eighth word here")
        #expect(MusicLibrary.maxQueryWords == 8)
    }

    @Test func unreadableFilesAreReportedNotFatal() throws {
        let folder = try Self.copyOfDemo()
        try Data("not audio at all".utf8).write(to: folder.appendingPathComponent("broken.wav"))
        let library = MusicLibrary.scan([folder])
        #expect(library.tracks.count == 12)
        #expect(library.problems.count == 1)
        #expect(library.problems.first?.file.lastPathComponent == "broken.wav")
    }
}
