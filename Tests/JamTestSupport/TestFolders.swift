import Foundation

/// Folders made by tests: all of them inside one folder per test process, which is removed
/// when the process exits, so a run leaves nothing behind in the temporary directory however
/// its tests end (a test that restarts a server must keep its data folder until it is done,
/// so removing each folder at the end of its own test is not always possible).
public enum TestFolders {
    private static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("openjam-tests-\(getpid())")
        // A closure without captures, as `atexit` takes a C function.
        atexit { TestFolders.removeAll() }
        return url
    }()

    /// A new, empty folder named after `label`.
    public static func make(_ label: String) throws -> URL {
        let url = root.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A path inside this process's folder that does not exist yet.
    public static func path(_ label: String) -> URL {
        root.appendingPathComponent("\(label)-\(UUID().uuidString)")
    }

    private static func removeAll() {
        do {
            try FileManager.default.removeItem(at: root)
        } catch CocoaError.fileNoSuchFile {
            // No test made a folder.
        } catch {
            FileHandle.standardError.write(Data("could not remove the tests' folder \(root.path): \(error)\n".utf8))
        }
    }
}
