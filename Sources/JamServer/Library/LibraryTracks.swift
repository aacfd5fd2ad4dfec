import JamCore
import JamProtocol

/// The library's tracks as sessions use them: in scan order for the fallback shuffle, and by
/// id for adds that name one. One per scan, shared by every session.
package final class LibraryTracks: Sendable {
    /// Every track, in scan order.
    package let all: [Track]
    private let byID: [String: Track]

    /// No library: no fallback, and no library track can be added.
    package static let none = LibraryTracks([])

    /// Indexes `tracks`; the first of two with one id wins, as the audio route's lookup does.
    package init(_ tracks: [Track]) {
        all = tracks
        byID = Dictionary(tracks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// `input` with a library track added in the library's own words (its name, artists and
    /// duration, which devices schedule by), or why it cannot be added: a client's copy of a
    /// library track may be stale, and one the library does not hold would never load. A
    /// retried add (its nonce already used in `state`) is left to be answered with its first
    /// item, even if its track has left the library since.
    func resolving(_ input: SessionInput, in state: SessionState) throws(JamError) -> SessionInput {
        guard case .command(.add(let track, let nonce, let itemId), let user) = input, track.source == .library,
            state.repeatedAdd(nonce: nonce, by: user) == nil
        else { return input }
        guard let known = byID[track.id] else {
            throw JamError(.notFound, all.isEmpty ? "this server has no music library" : "no track \(track.id) in the library")
        }
        return .command(.add(track: known, nonce: nonce, itemId: itemId), by: user)
    }
}
