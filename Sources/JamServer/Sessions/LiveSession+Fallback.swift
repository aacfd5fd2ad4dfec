import JamCore
import JamProtocol

extension LiveSession {
    /// How many recently played tracks a shuffle passes over: half the library, at most 50.
    static func recentWindow(librarySize: Int) -> Int { min(50, librarySize / 2) }

    /// The library tracks the session's fallback reserve needs now, if any: every turn asks,
    /// so a dry queue never waits for the library.
    func fallbackSupply() -> [Track]? {
        Self.fallbackSupply(for: state, shuffle: &fallbackShuffle, tracks: library.all)
    }

    /// The same for a state no session owns yet (one being created).
    static func fallbackSupply(for state: SessionState, shuffle: inout FallbackShuffle?, tracks: [Track]) -> [Track]? {
        let wanted = state.fallbackWanted
        guard wanted > 0, !tracks.isEmpty else { return nil }
        if shuffle == nil {
            shuffle = FallbackShuffle(tracks: tracks, seed: SeededRandom.seed(state.id.rawValue))
        }
        let recent = Set(state.recentTrackIDs(limit: recentWindow(librarySize: tracks.count)))
        let next = shuffle?.next(wanted, avoiding: recent) ?? []
        return next.isEmpty ? nil : next
    }

    /// A rescan changed the library: the next fallback tracks come from a fresh shuffle of it,
    /// adds check against it, and reserved tracks that left it go (they would fail to load on
    /// every device).
    func useLibrary(_ newer: LibraryTracks) {
        guard newer !== library, newer.all != library.all else { return }
        library = newer
        fallbackShuffle = nil
        guard role == .owner else { return }
        do {
            try take(.keepFallback(Set(newer.all.map(\.id))), cause: .tick)
        } catch {
            logger.error("pruning the fallback reserve failed", metadata: ["error": .loggable(error)])
        }
    }
}
