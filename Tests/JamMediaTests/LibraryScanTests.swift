import Foundation
import JamMedia
import JamProtocol
import JamTestSupport
import Testing

/// Scanning folders of mixed formats: tracks, fallbacks, problems, progress and rescans.
@Suite(.timeLimit(.minutes(2))) struct LibraryScanTests {
    static let audioNames = AudioFixture.all.map(\.name)

    @Test func everyFormatBecomesATrack() throws {
        let folder = try MediaFixtures.folder(with: Self.audioNames, label: "scan")
        let library = MusicLibrary.scan([folder])
        #expect(library.problems.isEmpty, "\(library.problems)")
        #expect(library.tracks.count == AudioFixture.all.count)
        for fixture in AudioFixture.all {
            let track = try #require(library.tracks.first { $0.file.lastPathComponent == fixture.name })
            #expect(track.title == fixture.title)
            #expect(track.artist == fixture.artist)
            #expect(track.album == fixture.album)
            #expect(track.contentType == fixture.format.contentType)
            #expect(track.hasCover == fixture.hasCover)
            #expect(track.id == LibraryTrack.stableID(relativePath: "/" + fixture.name))
        }
        #expect(library.search("smorgasbord").count == AudioFixture.all.filter { $0.album == "Smörgåsbord" }.count)
    }

    @Test func untaggedFilesAreNamedAfterTheFile() throws {
        let folder = try TestFolders.make("untagged")
        let samples = [Float](repeating: 0.1, count: 8000)
        try WAVFile.encode(samples: samples, sampleRate: 8000, title: "", artist: "", album: "").write(to: folder.appendingPathComponent("My Song.wav"))
        let tagged = [UInt8](try MediaFixtures.data("cbr-noxing.mp3"))
        let frames = tagged[(10 + Int(tagged[9]) + Int(tagged[8]) << 7)..<(tagged.count - 128)]
        try Data(frames).write(to: folder.appendingPathComponent("Bare Frames.MP3"))
        let library = MusicLibrary.scan([folder])
        #expect(library.problems.isEmpty, "\(library.problems)")
        #expect(library.tracks.map(\.title) == ["Bare Frames", "My Song"])
        #expect(library.tracks.allSatisfy { $0.artist == "Unknown artist" && $0.album == nil })
        #expect(library.tracks.map(\.durationMs) == [2038, 1000])
    }

    @Test func tagsAndNamesAreMadeFitToShowAndToAdd() throws {
        let folder = try TestFolders.make("control")
        let samples = [Float](repeating: 0.1, count: 8000)
        let escape = "\u{1B}]0;owned\u{07}"
        try WAVFile.encode(samples: samples, sampleRate: 8000, title: "Title\(escape)", artist: "Art\u{1B}[2Jist", album: String(repeating: "a", count: 400))
            .write(to: folder.appendingPathComponent("tagged.wav"))
        try WAVFile.encode(samples: samples, sampleRate: 8000, title: "", artist: "", album: "")
            .write(to: folder.appendingPathComponent("Name\u{1B}[31mRed.wav"))
        let library = MusicLibrary.scan([folder])
        #expect(library.problems.isEmpty, "\(library.problems)")
        let tagged = try #require(library.tracks.first { $0.file.lastPathComponent == "tagged.wav" })
        #expect(tagged.title == "Title ]0;owned")
        #expect(tagged.artist == "Art [2Jist")
        #expect(tagged.album?.count == Track.maxTextLength)
        let named = try #require(library.tracks.first { $0.file.lastPathComponent != "tagged.wav" })
        #expect(named.title == "Name [31mRed")
        for track in library.tracks {
            for text in [track.title, track.artist, track.album ?? ""] {
                #expect(throws: Never.self) { try Validate.text(text, field: "text", max: Track.maxTextLength, allowEmpty: true) }
            }
        }
    }

    @Test func brokenFilesAreProblemsWithReasonsAndOtherFilesAreIgnored() throws {
        let folder = try MediaFixtures.folder(with: ["tone.flac", "cover.png"], label: "broken")
        let broken = folder.appendingPathComponent("broken")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data().write(to: broken.appendingPathComponent("empty.ogg"))
        try Data("just some words".utf8).write(to: broken.appendingPathComponent("words.mp3"))
        try Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: broken.appendingPathComponent("noise.opus"))
        try (try MediaFixtures.data("tone.m4a")).prefix(3000).write(to: broken.appendingPathComponent("half.m4a"))
        try Data("notes".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        try Data("resource fork".utf8).write(to: folder.appendingPathComponent("._tone.flac"))
        let library = MusicLibrary.scan([folder])
        #expect(library.tracks.map(\.file.lastPathComponent) == ["tone.flac"])
        let reasons = Dictionary(uniqueKeysWithValues: library.problems.map { ($0.file.lastPathComponent, $0.reason) })
        #expect(reasons == [
            "empty.ogg": "empty file",
            "words.mp3": "not a known audio format (not WAV, FLAC, MP3, Ogg, MP4 or AAC)",
            "noise.opus": "not a known audio format (not WAV, FLAC, MP3, Ogg, MP4 or AAC)",
            "half.m4a": "truncated MP4 (the audio data runs past the end of the file)",
        ])
    }

    @Test func aMissingFolderIsAProblem() throws {
        let missing = TestFolders.path("nowhere")
        let library = MusicLibrary.scan([missing])
        #expect(library.tracks.isEmpty)
        #expect(library.problems.map(\.reason) == ["the folder does not exist"])
    }

    @Test func progressNamesEachFileThenReportsTheTotals() throws {
        let folder = try MediaFixtures.folder(with: ["tone.wav", "tone.opus", "vbr-v24.mp3"], label: "progress")
        try Data("no".utf8).write(to: folder.appendingPathComponent("zz-bad.flac"))
        var reports: [ScanProgress] = []
        let library = MusicLibrary.scan([folder], progress: { reports.append($0) })
        #expect(library.tracks.count == 3)
        #expect(reports.count == 5)
        #expect(reports.dropLast().compactMap { $0.currentFile?.lastPathComponent } == ["tone.opus", "tone.wav", "vbr-v24.mp3", "zz-bad.flac"])
        #expect(reports.dropLast().map(\.filesDone) == [0, 1, 2, 3])
        #expect(reports.allSatisfy { $0.filesFound == 4 })
        let last = try #require(reports.last)
        #expect(last.isFinished && last.filesDone == 4 && last.filesRead == 3 && last.filesFailed == 1 && last.filesReused == 0)
    }

    @Test func aRescanPicksUpAddedChangedAndRemovedFilesAndKeepsIds() throws {
        let folder = try MediaFixtures.folder(with: ["tone.flac", "tone.opus", "vorbis.ogg"], label: "rescan")
        let song = folder.appendingPathComponent("song.wav")
        let samples = [Float](repeating: 0.1, count: 8000)
        try WAVFile.encode(samples: samples, sampleRate: 8000, title: "First take", artist: "A", album: "B").write(to: song)
        let first = MusicLibrary.scan([folder])
        #expect(first.tracks.count == 4)

        // Retag one file, add one, remove one.
        try WAVFile.encode(samples: samples, sampleRate: 8000, title: "Second, longer take", artist: "A", album: "B").write(to: song)
        try FileManager.default.copyItem(at: MediaFixtures.url("tone.m4a"), to: folder.appendingPathComponent("new.m4a"))
        try FileManager.default.removeItem(at: folder.appendingPathComponent("vorbis.ogg"))
        var final = ScanProgress()
        let second = first.rescan { final = $0 }
        #expect(second.tracks.map(\.file.lastPathComponent) == ["new.m4a", "song.wav", "tone.flac", "tone.opus"])
        #expect(second.tracks.first { $0.file.lastPathComponent == "song.wav" }?.title == "Second, longer take")
        #expect(final.filesReused == 2 && final.filesRead == 2 && final.filesFailed == 0)
        for track in second.tracks where track.file.lastPathComponent != "new.m4a" {
            #expect(first.tracks.first { $0.file.lastPathComponent == track.file.lastPathComponent }?.id == track.id)
        }
        #expect(second.track(first.tracks.first { $0.file.lastPathComponent == "vorbis.ogg" }!.id) == nil)

        // Nothing changed: everything is reused and nothing differs.
        var third = ScanProgress()
        let again = second.rescan { third = $0 }
        #expect(again.tracks == second.tracks)
        #expect(third.filesReused == 4 && third.filesRead == 0)
    }

    @Test func theSamePathInTwoFoldersGetsTwoIds() throws {
        let one = try MediaFixtures.folder(with: ["tone.wav"], label: "one")
        let two = try MediaFixtures.folder(with: ["tone.wav"], label: "two")
        let library = MusicLibrary.scan([one, two])
        #expect(library.tracks.count == 2)
        #expect(Set(library.tracks.map(\.id)).count == 2)
        #expect(MusicLibrary.scan([one, two]).tracks.map(\.id) == library.tracks.map(\.id))
    }
}
