import Foundation

/// The tracks of the music folders, searchable by title, artist and album.
public struct MusicLibrary: Sendable {
    /// Every readable track, in path order.
    public private(set) var tracks: [LibraryTrack]
    /// Files that could not be read, with the reason.
    public private(set) var problems: [(file: URL, reason: String)]
    private var byId: [String: LibraryTrack]

    /// A library of `tracks`.
    public init(tracks: [LibraryTrack], problems: [(file: URL, reason: String)] = []) {
        self.tracks = tracks
        self.problems = problems
        byId = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Scans `folders` for WAV files (more formats come with their readers); unreadable
    /// files are reported in `problems`, never fatal.
    public static func scan(_ folders: [URL]) -> MusicLibrary {
        var tracks: [LibraryTrack] = []
        var problems: [(URL, String)] = []
        for folder in folders {
            let root = folder.standardizedFileURL.path
            guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else {
                problems.append((folder, "the folder cannot be read"))
                continue
            }
            for case let file as URL in walker where file.pathExtension.lowercased() == "wav" {
                let relative = String(file.standardizedFileURL.path.dropFirst(root.count))
                do {
                    let wav = try WAVFile.read(file)
                    let fallbackTitle = file.deletingPathExtension().lastPathComponent
                    tracks.append(LibraryTrack(
                        id: LibraryTrack.stableID(relativePath: relative), title: wav.title ?? fallbackTitle,
                        artist: wav.artist ?? "Unknown artist", album: wav.album, durationMs: wav.durationMs, file: file,
                        contentType: "audio/wav"))
                } catch {
                    problems.append((file, "\(error)"))
                }
            }
        }
        tracks.sort { $0.file.path < $1.file.path }
        return MusicLibrary(tracks: tracks, problems: problems)
    }

    /// The track with `id`.
    public func track(_ id: String) -> LibraryTrack? { byId[id] }

    /// Tracks whose title, artist or album has a word starting with every word of
    /// `query`, ignoring case and accents; title matches first.
    public func search(_ query: String, limit: Int = 50) -> [LibraryTrack] {
        let wanted = Self.words(query)
        guard !wanted.isEmpty else { return Array(tracks.prefix(limit)) }
        var scored: [(Int, LibraryTrack)] = []
        for track in tracks {
            let title = Self.words(track.title)
            let all = title + Self.words(track.artist) + Self.words(track.album ?? "")
            guard wanted.allSatisfy({ word in all.contains { $0.hasPrefix(word) } }) else { continue }
            let inTitle = wanted.filter { word in title.contains { $0.hasPrefix(word) } }.count
            scored.append((inTitle, track))
        }
        return scored.sorted { $0.0 > $1.0 }.prefix(limit).map(\.1)
    }

    /// Lowercased, accent-free words.
    static func words(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .lowercased()
            .split { !$0.isLetter && !$0.isNumber }
            .map(String.init)
    }
}
