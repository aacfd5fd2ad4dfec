import JamMedia
import JamProtocol

/// One session's shuffle of the music library for fallback.
///
/// Each round plays every track at most once, in an order drawn one step at a time
/// (a sparse Fisher–Yates), so the first tracks are ready at once however large the
/// library is and a session keeps only the swaps it made. Tracks that played recently
/// are passed over.
struct FallbackShuffle {
    private let tracks: [Track]
    /// Positions whose index differs from the position itself.
    private var swaps: [Int: Int] = [:]
    private var drawn = 0
    private var random: SeededRandom

    /// A shuffle of `tracks`; the same seed gives the same order.
    init(tracks: [Track], seed: UInt64) {
        self.tracks = tracks
        self.random = SeededRandom(seed: seed)
    }

    /// Up to `count` tracks, none in `recent` unless the library has nothing else to offer.
    mutating func next(_ count: Int, avoiding recent: Set<String>) -> [Track] {
        guard !tracks.isEmpty else { return [] }
        var picked: [Track] = []
        var passedOver: [Track] = []
        // At most two full rounds: enough to find every track that is not recent.
        var attempts = 2 * tracks.count
        while picked.count < count, attempts > 0 {
            attempts -= 1
            let track = draw()
            if recent.contains(track.id) || picked.contains(track) {
                passedOver.append(track)
            } else {
                picked.append(track)
            }
        }
        // A library smaller than the recent window repeats rather than going silent.
        for track in passedOver where picked.count < count && !picked.contains(track) { picked.append(track) }
        return picked
    }

    /// Swaps remembered this round (grows with what was drawn, not with the library).
    var swapsHeld: Int { swaps.count }

    private mutating func draw() -> Track {
        if drawn == tracks.count {
            drawn = 0
            swaps = [:]
        }
        let chosen = drawn + Int(random.next() % UInt64(tracks.count - drawn))
        let value = swaps[chosen] ?? chosen
        swaps[chosen] = swaps[drawn] ?? drawn
        swaps[drawn] = nil
        drawn += 1
        return tracks[value]
    }
}

extension SeededRandom {
    /// A shuffle seed from text, e.g. a session id.
    static func seed(_ text: String) -> UInt64 { LibraryTrack.fnv1a64(text) }
}
