/// The playback-position rule, once for the server's timeline (`CurrentItem`), the
/// session view (`NowPlaying`) and the client's (`PlaybackTimeline`), in whole or
/// fractional milliseconds: while playing the position advances from `positionMs` at
/// `anchorMs` (held until the anchor: a start, resume or seek announced for a future
/// instant), and it never leaves `0...duration`. The web client's `timeline.js
/// positionAt` mirrors it (Tests/Fixtures/ClientParity/timeline.json checks both).
public enum PlaybackPosition {
    /// The position at instant `t`.
    public static func at<Value: Comparable & AdditiveArithmetic>(
        _ t: Value, state: PlaybackState, positionMs: Value, anchorMs: Value, durationMs: Value?
    ) -> Value {
        var position = positionMs
        switch state {
        case .playing: if t > anchorMs { position += t - anchorMs }
        case .preparing, .paused: break
        }
        if let durationMs { position = min(position, durationMs) }
        return max(.zero, position)
    }
}
