import JamMedia
import NIOPosix

/// The music library the server offers right now; a rescan replaces it whole, so a
/// request always sees one consistent scan.
public actor LibraryCatalog {
    /// The current scan.
    public private(set) var library: MusicLibrary
    /// Covers read from this scan's files.
    private var covers = CoverCache()
    /// Covers being read: every request that asks meanwhile waits for the one read.
    private var coverReads: [String: Task<CoverArt?, any Error>] = [:]
    /// Counts scans, so a read of the one before is not kept.
    private var generation = 0

    /// Starts with `library`.
    public init(_ library: MusicLibrary) {
        self.library = library
    }

    /// Puts a newer scan in place.
    func replace(with newer: MusicLibrary) {
        library = newer
        forgetCovers()
    }

    /// Reads covers again from now on: a scan that found the same tracks may still have
    /// seen a cover change (a new picture beside them, a file tagged again).
    func forgetCovers() {
        generation += 1
        covers.removeAll()
        coverReads = [:]
    }

    /// The cover of library track `id`, nil when it has none. Reading one can take the
    /// whole file (an MP3 without a frame count is counted), so it runs on NIO's thread
    /// pool, once for all the members whose screens ask for it when a song starts, and is
    /// kept until the next scan.
    func cover(_ id: String) async throws -> CoverArt? {
        if let kept = covers.cover(id) { return kept }
        if let reading = coverReads[id] { return try await reading.value }
        let library = self.library, generation = self.generation
        // Ends with the read; it outlives a request that gives up, so the others still get it.
        let reading = Task { try await NIOThreadPool.singleton.runIfActive { try library.coverArt(id) } }
        coverReads[id] = reading
        let result = await reading.result
        if generation == self.generation {
            coverReads[id] = nil
            if case .success(let cover) = result { covers.keep(cover, for: id) }
        }
        return try result.get()
    }
}
