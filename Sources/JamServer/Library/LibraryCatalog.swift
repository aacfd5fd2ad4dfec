import JamMedia
import NIOPosix

/// The music library the server offers right now; a rescan replaces it whole, so a
/// request always sees one consistent scan.
public actor LibraryCatalog {
    /// The current scan.
    public private(set) var library: MusicLibrary
    /// Covers read from this scan's files.
    private var covers = CoverCache()
    /// Covers being read, with the requests that asked meanwhile: they get the one read's answer.
    private var coverWaiters: [String: [CheckedContinuation<CoverArt?, any Error>]] = [:]
    /// Counts scans, so a read of the one before is not kept.
    private var generation = 0

    /// Starts with `library`.
    public init(_ library: MusicLibrary) {
        self.library = library
    }

    /// Puts a newer scan in place, also one that found the same tracks: it holds each file's
    /// size and date as read now, so a file changed without changing its track (a tag the
    /// server does not show, a copy over it) is not read again on every later rescan, and its
    /// covers are read anew (a new picture beside a track changes no track). Returns whether
    /// the tracks changed.
    func take(_ newer: MusicLibrary) -> Bool {
        let changed = newer.tracks != library.tracks
        library = newer
        forgetCovers()
        return changed
    }

    /// Reads covers again from now on.
    private func forgetCovers() {
        generation += 1
        covers.removeAll()
    }

    /// The cover of library track `id`, nil when it has none. Reading one can take the
    /// whole file (an MP3 without a frame count is counted), so it runs on NIO's thread
    /// pool, once for all the members whose screens ask for it when a song starts, and is
    /// kept until the next scan.
    func cover(_ id: String) async throws -> CoverArt? {
        if let kept = covers.cover(id) { return kept }
        if coverWaiters[id] != nil {
            return try await withCheckedThrowingContinuation { coverWaiters[id, default: []].append($0) }
        }
        coverWaiters[id] = []
        let library = self.library, generation = self.generation
        // The pool's read is not called off by a request that gives up: it ends on its own, and
        // the requests waiting on it get its answer.
        let result: Result<CoverArt?, any Error>
        do {
            result = .success(try await NIOThreadPool.singleton.runIfActive { try library.coverArt(id) })
        } catch {
            result = .failure(error)
        }
        // A read of the scan before a rescan answers its requests but is not kept.
        if generation == self.generation, case .success(let cover) = result { covers.keep(cover, for: id) }
        for waiter in coverWaiters.removeValue(forKey: id) ?? [] { waiter.resume(with: result) }
        return try result.get()
    }
}
