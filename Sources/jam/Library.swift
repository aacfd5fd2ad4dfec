import ArgumentParser
import Foundation
import JamMedia

/// `jam library …`: the music library as the server will see it.
struct Library: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Look at a music library the way `jam serve --music` reads it.",
        subcommands: [Scan.self]
    )

    /// `jam library scan DIR…`: reads every audio file with a progress bar, then sums up.
    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Scan music folders: tags, lengths and covers of WAV, FLAC, MP3, Ogg Vorbis/Opus and M4A/AAC files; lists what cannot be read.")

        @Argument(help: "Music folders.")
        var folders: [String]

        @Flag(name: .customLong("list"), help: "Also list every track found.")
        var list = false

        func validate() throws {
            guard !folders.isEmpty else { throw ValidationError("name at least one music folder") }
            for folder in folders {
                if let problem = MusicLibrary.folderProblem(folder) { throw ValidationError("music folder \"\(folder)\" \(problem)") }
            }
        }

        func run() async throws {
            let bar = ProgressBar(interactive: isatty(STDERR_FILENO) == 1)
            let started = ContinuousClock.now
            let library = MusicLibrary.scan(folders.map { URL(fileURLWithPath: $0) }) { progress in
                bar.show(progress)
            }
            bar.finish()
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            var out = ""
            if list {
                for track in library.tracks {
                    let length = Self.length(track.durationMs)
                    out += "\(track.id)  \(length)  \(track.title) — \(track.artist)\(track.album.map { " (\($0))" } ?? "")\(track.hasCover ? "  [cover]" : "")\n"
                }
            }
            let total = library.tracks.reduce(Int64(0)) { $0 + $1.durationMs }
            out += "\(library.tracks.count) tracks (\(Self.length(total))), \(library.tracks.filter(\.hasCover).count) with covers, "
            out += "\(library.problems.count) unreadable; scanned in \(String(format: "%.2f", seconds)) s\n"
            for problem in library.problems {
                out += "  cannot read \(problem.file.path): \(problem.reason)\n"
            }
            FileHandle.standardOutput.write(Data(out.utf8))
        }

        static func length(_ ms: Int64) -> String {
            let seconds = ms / 1000
            return seconds >= 3600
                ? String(format: "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
                : String(format: "%d:%02d", seconds / 60, seconds % 60)
        }
    }
}

/// The scan's progress on standard error: a redrawn bar on a terminal, a line every
/// 10 % otherwise (so logs of scripted scans stay short).
final class ProgressBar {
    private let interactive: Bool
    private var lastPercent = -1
    private var lastDraw = ContinuousClock.now - .seconds(1)

    init(interactive: Bool) { self.interactive = interactive }

    func show(_ progress: ScanProgress) {
        guard progress.filesFound > 0 else { return }
        let percent = progress.filesDone * 100 / progress.filesFound
        if interactive {
            // Redrawing costs more than reading a small file; 20 frames a second is plenty.
            guard ContinuousClock.now - lastDraw > .milliseconds(50) || progress.isFinished else { return }
            lastDraw = .now
            let width = 30
            let filled = width * progress.filesDone / progress.filesFound
            let name = progress.currentFile?.lastPathComponent ?? ""
            let line = "\r[\(String(repeating: "█", count: filled))\(String(repeating: "·", count: width - filled))] "
                + "\(progress.filesDone)/\(progress.filesFound)  \(progress.filesFailed) failed  \(name.prefix(40))\u{1B}[K"
            FileHandle.standardError.write(Data(line.utf8))
        } else if percent / 10 != lastPercent / 10 || progress.isFinished {
            lastPercent = percent
            FileHandle.standardError.write(Data("scanned \(progress.filesDone)/\(progress.filesFound) files (\(percent) %), \(progress.filesFailed) failed\n".utf8))
        }
    }

    func finish() {
        if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
