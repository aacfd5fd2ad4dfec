import JamCore
import JamProtocol

extension LiveSession {
    /// How many recently played tracks a shuffle passes over: half the library, at most 50.
    static func recentWindow(librarySize: Int) -> Int { min(50, librarySize / 2) }

    /// Keeps the session's fallback reserve full from the library shuffle, so a dry queue
    /// never waits for the library; called after every change to the state.
    func topUpFallback() {
        Self.topUpFallback(&state, &fallbackShuffle, from: fallbackTracks)
    }

    /// A rescan changed the library: the next fallback tracks come from a fresh shuffle of it.
    func useFallbackTracks(_ tracks: [Track]) {
        guard tracks != fallbackTracks else { return }
        fallbackTracks = tracks
        fallbackShuffle = nil
        // Reserved tracks that left the library would fail to load on every device.
        let present = Set(tracks.map(\.id))
        if var reserve = state.fallbackReserve {
            reserve.tracks.removeAll { !present.contains($0.id) }
            state.fallbackReserve = reserve
        }
        topUpFallback()
        environment.scheduler.schedule(self, at: state.nextDeadline())
    }

    /// The same for a state not yet owned by an actor (a session being loaded).
    static func topUpFallback(_ state: inout SessionState, _ shuffle: inout FallbackShuffle?, from tracks: [Track]) {
        let wanted = state.fallbackWanted
        guard wanted > 0, !tracks.isEmpty else { return }
        if shuffle == nil { shuffle = FallbackShuffle(tracks: tracks, seed: ShuffleRandom.seed(state.id.rawValue)) }
        let recent = Set(state.recentTrackIDs(limit: recentWindow(librarySize: tracks.count)))
        state.supplyFallback(shuffle?.next(wanted, avoiding: recent) ?? [])
    }
}
