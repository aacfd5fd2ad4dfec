import Foundation

/// The tracks of the music folders, searchable by title, artist and album.
public struct MusicLibrary: Sendable {
    /// Every readable track, in path order.
    public private(set) var tracks: [LibraryTrack]
    /// Files that could not be read, with the reason.
    public private(set) var problems: [(file: URL, reason: String)]
    /// The folders this library was scanned from (none when built from tracks).
    public private(set) var folders: [URL]
    private var byId: [String: LibraryTrack]
    /// Each track's words as a search compares them (`words(_:)`), in `tracks` order: folded
    /// once per scan, not once per track on every search.
    private var searchWords: [(title: [String], all: [String])]
    /// What each file's last reading gave, by path, so a rescan skips unchanged files.
    var entries: [String: ScanEntry]

    /// A library of `tracks`.
    public init(tracks: [LibraryTrack], problems: [(file: URL, reason: String)] = []) {
        self.init(tracks: tracks, problems: problems, folders: [], entries: [:])
    }

    init(tracks: [LibraryTrack], problems: [(file: URL, reason: String)], folders: [URL], entries: [String: ScanEntry]) {
        self.tracks = tracks
        self.problems = problems
        self.folders = folders
        self.entries = entries
        byId = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        searchWords = tracks.map { track in
            let title = Self.indexWords(track.title)
            return (title, title + Self.indexWords(track.artist) + Self.indexWords(track.album ?? ""))
        }
    }

    /// The most words of a query a search compares: more narrow nothing a person would
    /// notice, and each costs a pass over every track's words.
    public static let maxQueryWords = 8

    /// Why `path` cannot be a music folder ("does not exist", "is a file, not a folder",
    /// "cannot be read (…)"), or nil when it can. The scan itself takes such a folder as a
    /// problem and goes on; a server told to play it should not start with an empty library.
    public static func folderProblem(_ path: String) -> String? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return "does not exist" }
        guard isFolder.boolValue else { return "is a file, not a folder" }
        do {
            _ = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            return "cannot be read (\((error as NSError).localizedDescription))"
        }
        return nil
    }

    /// Scans `folders` for WAV, FLAC, MP3, Ogg Vorbis/Opus, MP4/M4A and AAC files;
    /// unreadable files are reported in `problems`, never fatal.
    public static func scan(_ folders: [URL]) -> MusicLibrary {
        scan(folders, progress: { _ in })
    }

    /// Scans this library's folders again: new files are added, changed ones re-read,
    /// removed ones dropped; files whose size and modification time are unchanged are
    /// taken over without reading. Ids stay the same for the same paths.
    public func rescan(progress: (ScanProgress) -> Void = { _ in }) -> MusicLibrary {
        Self.scan(folders, reusing: self, progress: progress)
    }

    /// The cover of the track with `id`: embedded, or a picture file beside it.
    public func coverArt(_ id: String) throws(AudioFile.ReadError) -> CoverArt? {
        guard let track = byId[id], track.hasCover else { return nil }
        return try AudioFile.coverArt(track.file)
    }

    /// The track with `id`.
    public func track(_ id: String) -> LibraryTrack? { byId[id] }

    /// Tracks whose title, artist or album has a word starting with every word of
    /// `query`, ignoring case and accents; title matches first.
    /// Only its first `maxQueryWords` different words count.
    public func search(_ query: String, limit: Int = 50) -> [LibraryTrack] {
        var seen = Set<String>()
        let wanted = Array(Self.words(query).filter { seen.insert($0).inserted }.prefix(Self.maxQueryWords))
        guard !wanted.isEmpty else { return Array(tracks.prefix(limit)) }
        var scored: [(Int, LibraryTrack)] = []
        for (track, words) in zip(tracks, searchWords) {
            guard wanted.allSatisfy({ word in words.all.contains { $0.hasPrefix(word) } }) else { continue }
            let inTitle = wanted.filter { word in words.title.contains { $0.hasPrefix(word) } }.count
            scored.append((inTitle, track))
        }
        return scored.sorted { $0.0 > $1.0 }.prefix(limit).map(\.1)
    }

    /// Lowercased, accent-free words, as a query's are read. An apostrophe joins, not splits:
    /// people type "dont" or "don't" for "Don't".
    static func words(_ text: String) -> [String] {
        split(folded(text).filter { !apostrophes.contains($0) })
    }

    /// The words a track is found by: those of `words(_:)`, and where an apostrophe joined two,
    /// each part as well ("L'Amour" is found by "lamour", "l'amour" and "amour", "Rock 'n'
    /// Roll" by "rock n roll").
    static func indexWords(_ text: String) -> [String] {
        let joined = words(text)
        let parts = split(folded(text))
        return joined + parts.filter { !joined.contains($0) }
    }

    private static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
    }

    private static func split(_ text: String) -> [String] {
        text.split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// The typewriter apostrophe, the typographic one, and the modifier letter some tags use.
    private static let apostrophes: Set<Character> = ["'", "\u{2019}", "\u{02BC}"]
}
