import Foundation
import JamTestSupport
import Testing

/// `jam library scan DIR`: progress, a summary and the files it cannot read.
@Suite struct LibraryScanCommandTests {
    @Test func scanningAFolderShowsProgressTheTracksAndWhatCannotBeRead() async throws {
        let folder = try TestFolders.make("scan")
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("JamMediaTests/Fixtures")
        for name in ["tone.flac", "vbr-v24.mp3", "tone.opus"] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name), to: folder.appendingPathComponent(name))
        }
        try Data("this is not music".utf8).write(to: folder.appendingPathComponent("notes.mp3"))
        let (status, output) = try await ChildProcess.run(try ServerProcess.executable, arguments: ["library", "scan", folder.path, "--list"])
        #expect(status.isSuccess, "\(output)")
        #expect(output.contains("scanned 4/4 files (100 %), 1 failed"), "\(output)")
        #expect(output.contains("3 tracks (0:0"), "\(output)")
        #expect(output.contains("1 unreadable"), "\(output)")
        #expect(output.contains("cannot read \(folder.appendingPathComponent("notes.mp3").path): "), "\(output)")
        let listed = output.split(separator: "\n").filter { $0.hasPrefix("lib-") }
        #expect(listed.count == 3, "\(output)")

        let (missingStatus, missingOutput) = try await ChildProcess.run(try ServerProcess.executable, arguments: ["library", "scan", "/no/such/folder"])
        #expect(!missingStatus.isSuccess)
        #expect(missingOutput.contains("music folder \"/no/such/folder\" does not exist"), "\(missingOutput)")
    }
}
