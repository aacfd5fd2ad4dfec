import Foundation
import JamMedia
import JamTestSupport
import Testing

@testable import JamServer

/// What a rescan puts in place.
@Suite struct LibraryCatalogTests {
    /// A file the library cannot read, changed into another it cannot read: the tracks stay the
    /// same, and the newer scan must still be the one kept, or every later rescan reads the
    /// changed file again and its new problem is never told.
    @Test func aScanThatFindsTheSameTracksIsStillTheOneKept() async throws {
        let folder = try TestFolders.make("catalog")
        let file = folder.appendingPathComponent("broken.wav")
        try Data("not audio at all".utf8).write(to: file)
        let first = MusicLibrary.scan([folder]) { _ in }
        let catalog = LibraryCatalog(first)
        let firstReason = try #require(first.problems.first?.reason)

        try Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: file.path)
        let second = await catalog.library.rescan()
        #expect(second.tracks.isEmpty)
        let secondReason = try #require(second.problems.first?.reason)
        #expect(secondReason != firstReason)

        #expect(await catalog.take(second) == false, "the same tracks")
        #expect(await catalog.library.problems.map(\.reason) == [secondReason])
    }

    @Test func aScanWithOtherTracksSaysSo() async throws {
        let folder = try TestFolders.make("catalog")
        let catalog = LibraryCatalog(MusicLibrary.scan([folder]) { _ in })
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("JamMediaTests/Fixtures")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("tone.wav"), to: folder.appendingPathComponent("tone.wav"))
        let newer = await catalog.library.rescan()
        #expect(newer.tracks.count == 1)
        #expect(await catalog.take(newer))
        #expect(await catalog.library.tracks.count == 1)
    }
}
