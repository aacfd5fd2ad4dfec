import Foundation
import JamProtocol

/// How far a library scan has got, reported before each file is read and once at the end.
public struct ScanProgress: Sendable, Hashable {
    /// Audio files in the folders (by extension); all are found before reading starts.
    public var filesFound = 0
    /// Files handled so far: read, reused or failed.
    public var filesDone = 0
    /// Files read and added.
    public var filesRead = 0
    /// Files added unchanged from the previous scan, without reading them.
    public var filesReused = 0
    /// Files that could not be read, now or (unchanged) in the previous scan; see `MusicLibrary.problems`.
    public var filesFailed = 0
    /// The file about to be read; nil in the final report.
    public var currentFile: URL?

    /// A report with these counts.
    public init(filesFound: Int = 0, filesDone: Int = 0, filesRead: Int = 0, filesReused: Int = 0, filesFailed: Int = 0, currentFile: URL? = nil) {
        self.filesFound = filesFound
        self.filesDone = filesDone
        self.filesRead = filesRead
        self.filesReused = filesReused
        self.filesFailed = filesFailed
        self.currentFile = currentFile
    }

    /// Whether this is the final report.
    public var isFinished: Bool { currentFile == nil && filesDone == filesFound }
}

/// One file's last reading, kept to skip the file in the next scan if it did not change.
struct ScanEntry: Sendable {
    var size: Int
    var modified: Date?
    var outcome: Result<AudioMetadata, AudioFile.ReadError>
}

extension MusicLibrary {
    /// A file the walk found: where, its path inside its folder, and what identifies its version.
    private struct Candidate {
        var file: URL
        var relativePath: String
        /// The path under the folder as given (a linked folder is walked where it leads, but
        /// its tracks are named as before).
        var namedPath: String
        var size: Int
        var modified: Date?
    }

    /// Scans `folders`, calling `progress` before each file and at the end; files that
    /// `previous` read and that kept their size and modification time are not read again.
    public static func scan(_ folders: [URL], reusing previous: MusicLibrary? = nil, progress: (ScanProgress) -> Void) -> MusicLibrary {
        var problems: [(file: URL, reason: String)] = []
        var coverFolders: [String: Bool] = [:]
        let candidates = walk(folders, problems: &problems, coverFolders: &coverFolders)
        var report = ScanProgress(filesFound: candidates.count)
        var entries: [String: ScanEntry] = [:]
        var tracks: [LibraryTrack] = []
        var ids: Set<String> = []
        for candidate in candidates {
            report.currentFile = candidate.file
            progress(report)
            let key = candidate.file.path
            var entry: ScanEntry
            var reused = false
            if let old = previous?.entries[key], old.size == candidate.size, old.modified == candidate.modified {
                entry = old
                reused = true
            } else {
                entry = ScanEntry(size: candidate.size, modified: candidate.modified, outcome: Result { () throws(AudioFile.ReadError) in
                    try AudioFile.read(candidate.file)
                })
            }
            if case .success(let metadata) = entry.outcome, metadata.durationMs <= 0 {
                entry.outcome = .failure(AudioFile.ReadError("no audio (the length is zero)"))
            }
            entries[key] = entry
            report.filesDone += 1
            switch entry.outcome {
            case .success(let metadata):
                if reused { report.filesReused += 1 } else { report.filesRead += 1 }
                var id = LibraryTrack.stableID(relativePath: candidate.relativePath)
                // The same relative path in two folders: the later one is named by its full path.
                if ids.contains(id) { id = LibraryTrack.stableID(relativePath: candidate.namedPath) }
                ids.insert(id)
                // Tags and names go to every client and terminal as they are here: no escape
                // sequences, and nothing a member's add of the track would be refused for.
                func shown(_ text: String?) -> String? {
                    text.map { Validate.displayable($0, max: Track.maxTextLength) }.flatMap { $0.isEmpty ? nil : $0 }
                }
                let fallbackTitle = shown(candidate.file.deletingPathExtension().lastPathComponent) ?? "Untitled"
                tracks.append(LibraryTrack(
                    id: id, title: shown(metadata.title) ?? fallbackTitle, artist: shown(metadata.artist) ?? "Unknown artist",
                    album: shown(metadata.album), durationMs: metadata.durationMs, file: candidate.file, contentType: metadata.contentType,
                    hasCover: metadata.hasCover || coverFolders[candidate.file.deletingLastPathComponent().path] == true))
            case .failure(let error):
                report.filesFailed += 1
                problems.append((candidate.file, error.description))
            }
        }
        report.currentFile = nil
        progress(report)
        tracks.sort { $0.file.path < $1.file.path }
        return MusicLibrary(tracks: tracks, problems: problems, folders: folders, entries: entries)
    }

    /// The audio files under `folders`, in path order, noting folders that hold a cover picture.
    private static func walk(_ folders: [URL], problems: inout [(file: URL, reason: String)], coverFolders: inout [String: Bool]) -> [Candidate] {
        var candidates: [Candidate] = []
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey]
        let coverNames = Set(AudioFile.sidecarCoverNames)
        for folder in folders {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                problems.append((folder, "the folder does not exist"))
                continue
            }
            // The walk does not follow links, the folder's own included: a music folder that
            // is a link (to a mounted disk, say) is walked where it leads.
            let resolved = folder.resolvingSymlinksInPath()
            let root = resolved.standardizedFileURL.path
            var walkErrors: [(file: URL, reason: String)] = []
            // Hidden files include macOS's "._song.mp3" resource forks, which are not audio.
            guard let walker = FileManager.default.enumerator(at: resolved, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles],
                                                              errorHandler: { url, error in
                                                                  walkErrors.append((url, "cannot be read (\(error.localizedDescription))"))
                                                                  return true
                                                              })
            else {
                problems.append((folder, "the folder cannot be read"))
                continue
            }
            for case let file as URL in walker {
                let isCover = coverNames.contains(file.lastPathComponent.lowercased())
                guard isCover || AudioFile.extensions.contains(file.pathExtension.lowercased()) else { continue }
                let values: URLResourceValues
                do {
                    values = try file.resourceValues(forKeys: Set(keys))
                } catch {
                    problems.append((file, "cannot be read (\(error.localizedDescription))"))
                    continue
                }
                // Links are not followed: one could lead anywhere the server may read, and
                // the library serves what it finds to anybody with a member's token.
                guard values.isRegularFile == true else {
                    if AudioFile.isLink(file) { problems.append((file, "a link, not followed: only files inside the folder are served")) }
                    continue
                }
                if isCover {
                    coverFolders[file.deletingLastPathComponent().path] = true
                    continue
                }
                let relativePath = String(file.standardizedFileURL.path.dropFirst(root.count))
                candidates.append(Candidate(file: file, relativePath: relativePath, namedPath: folder.standardizedFileURL.path + relativePath,
                                            size: values.fileSize ?? 0, modified: values.contentModificationDate))
            }
            problems += walkErrors
        }
        return candidates.sorted { $0.namedPath < $1.namedPath }
    }
}
