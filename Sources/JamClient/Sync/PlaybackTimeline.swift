import JamProtocol

/// The last-known server timeline of one item: where it is at which server instant.
///
/// While playing, `position(t) = positionMs + (t − anchorMs)` for `t ≥ anchorMs`, and
/// `positionMs` before the anchor (a start, resume or seek announced for a future
/// instant holds the position until then). The position never leaves `0...duration`.
public struct PlaybackTimeline: Hashable, Sendable {
    /// The item's epoch on the server.
    public var epoch: Int64
    /// The queue item.
    public var itemId: ItemID
    /// The song.
    public var track: Track
    /// Preparing (loaded, start planned at `anchorMs`), playing or paused.
    public var state: PlaybackState
    /// Position at `anchorMs`, ms.
    public var positionMs: Double
    /// Server instant (Unix ms) the position refers to; for `preparing`, the planned start.
    public var anchorMs: Double

    /// Creates a timeline.
    public init(epoch: Int64, itemId: ItemID, track: Track, state: PlaybackState, positionMs: Double, anchorMs: Double) {
        self.epoch = epoch
        self.itemId = itemId
        self.track = track
        self.state = state
        self.positionMs = positionMs
        self.anchorMs = anchorMs
    }

    /// The timeline a `stateSync`'s `nowPlaying` (or `upNext`) describes.
    public init(_ nowPlaying: NowPlaying) {
        self.init(
            epoch: nowPlaying.epoch, itemId: nowPlaying.item.id, track: nowPlaying.item.track, state: nowPlaying.state,
            positionMs: Double(nowPlaying.positionMs), anchorMs: Double(nowPlaying.anchorMs))
    }

    /// The timeline a `playPrepare` announces: preparing, from 0 at `startAt`.
    public init(_ prepare: PlayPrepare) {
        self.init(
            epoch: prepare.epoch, itemId: prepare.item.id, track: prepare.item.track, state: .preparing, positionMs: 0,
            anchorMs: Double(prepare.startAt))
    }

    /// The track's length, when known.
    public var durationMs: Double? { track.durationMs.map(Double.init) }

    /// The position at server instant `t` (`PlaybackPosition`).
    public func position(atServer t: Double) -> Double {
        PlaybackPosition.at(t, state: state, positionMs: positionMs, anchorMs: anchorMs, durationMs: durationMs)
    }

    /// True when the audio should be advancing at server instant `t`.
    public func isAdvancing(atServer t: Double) -> Bool {
        guard state == .playing, t >= anchorMs else { return false }
        if let durationMs { return positionMs + (t - anchorMs) < durationMs }
        return true
    }

    /// The server instant the item reaches its end, when playing with a known duration.
    public var endsAtServer: Double? {
        guard state == .playing, let durationMs else { return nil }
        return anchorMs + max(0, durationMs - positionMs)
    }

    /// After `playCommit`: playing from `positionMs` at `startAt`.
    public func committed(_ commit: PlayCommit) -> PlaybackTimeline {
        moved(to: .playing, positionMs: commit.positionMs, at: commit.startAt)
    }

    /// After `pause`: held at `positionMs` from `atMs`.
    public func paused(_ change: TimelineChange) -> PlaybackTimeline {
        moved(to: .paused, positionMs: change.positionMs, at: change.atMs)
    }

    /// After `resume`: playing from `positionMs` at `atMs`.
    public func resumed(_ change: TimelineChange) -> PlaybackTimeline {
        moved(to: .playing, positionMs: change.positionMs, at: change.atMs)
    }

    /// After `seek`: the state stays; from `atMs` the position is `positionMs`.
    public func sought(_ change: TimelineChange) -> PlaybackTimeline {
        moved(to: state, positionMs: change.positionMs, at: change.atMs)
    }

    private func moved(to state: PlaybackState, positionMs: Int64, at anchor: Int64) -> PlaybackTimeline {
        var next = self
        next.state = state
        next.positionMs = Double(positionMs)
        next.anchorMs = Double(anchor)
        return next
    }

    /// True when both describe the same item on the same course from the later of the
    /// two anchors on (a `stateSync` restating what a device already follows).
    public func hasSameCourse(as other: PlaybackTimeline, toleranceMs: Double = 1) -> Bool {
        guard epoch == other.epoch, itemId == other.itemId, state == other.state else { return false }
        switch state {
        case .playing:
            return abs((positionMs - anchorMs) - (other.positionMs - other.anchorMs)) <= toleranceMs
        case .paused:
            return abs(positionMs - other.positionMs) <= toleranceMs
        case .preparing:
            return abs(positionMs - other.positionMs) <= toleranceMs && abs(anchorMs - other.anchorMs) <= toleranceMs
        }
    }
}
