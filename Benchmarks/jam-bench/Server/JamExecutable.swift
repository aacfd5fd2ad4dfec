import Foundation

/// The `jam` binary a run measures, and whether it is a release build.
struct JamExecutable: Sendable {
    let path: String
    /// True for a release build; debug figures are not comparable and are labelled so.
    let isRelease: Bool

    /// Failure to find the binary.
    struct NotFound: Error, CustomStringConvertible {
        let description: String
    }

    /// `explicit` if given, else `.build/release/jam`, else `.build/debug/jam` with a printed note.
    static func locate(_ explicit: String?) throws -> JamExecutable {
        let files = FileManager.default
        if let explicit {
            guard files.isExecutableFile(atPath: explicit) else { throw NotFound(description: "--jam \(explicit) is not an executable file") }
            return JamExecutable(path: explicit, isRelease: !explicit.contains("/debug/"))
        }
        if files.isExecutableFile(atPath: ".build/release/jam") {
            return JamExecutable(path: ".build/release/jam", isRelease: true)
        }
        if files.isExecutableFile(atPath: ".build/debug/jam") {
            Console.line("note: .build/release/jam not found; using .build/debug/jam. Debug figures are not comparable with the targets (swift build -c release --product jam).")
            return JamExecutable(path: ".build/debug/jam", isRelease: false)
        }
        throw NotFound(description: "no jam binary: build it (swift build -c release --product jam) or pass --jam PATH")
    }

    /// "release" or "debug".
    var buildName: String { isRelease ? "release" : "debug" }
}

/// Progress lines on standard error, so standard output holds only the report.
enum Console {
    /// Writes one line to standard error.
    static func line(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
