import JamProtocol

/// The audio player a `SyncEngine` drives.
///
/// All instants are local monotonic milliseconds from the same `MonotonicClock`
/// the engine and `ClockSync` use; positions are milliseconds into the track.
///
/// An implementation over AVFoundation maps `play(from:atLocal:)` to a preroll plus
/// `setRate(_:time:atHostTime:)`, `setRate` to `AVPlayer.rate` (with a pitch-keeping
/// `audioTimePitchAlgorithm`), and `position(atLocal:)` to the item time
/// extrapolated to that host time.
public protocol Player: Sendable {
    /// Loads `track`; returns when it can start without delay. Whatever plays now plays on
    /// until the next `play(from:atLocal:)` takes effect, or a `pause`: the next song is
    /// loaded while the current one ends, and starts the instant it does (two `AVPlayer`s,
    /// or an `AVQueuePlayer`). When the load throws, what played goes on until the engine
    /// pauses it (it does at once). The engine cancels a load whose track the session no
    /// longer wants (a skip while it downloads): it should end at once, throwing
    /// `CancellationError`, as `AVAsset`'s async loading does; one that runs on holds up
    /// the next song's load until it ends.
    func load(_ track: Track) async throws

    /// Starts loading `track` beside what plays, so that a later `load` of it returns at once:
    /// the next song, announced while the current one plays. Called once per announced item;
    /// a failure shows when `load` uses it.
    func preload(_ track: Track) async

    /// From local instant `atLocal` on, plays so that the position is
    /// `positionMs + (t − atLocal)`. If `atLocal` is in the future, whatever the player
    /// does now (paused, or playing the old course) continues until then; if it is in
    /// the past, the player starts as soon as it can, at the position the course has
    /// reached by then.
    func play(from positionMs: Double, atLocal: Double) async

    /// Pauses at once, holding the current position.
    func pause() async

    /// Moves to `positionMs`; playing or paused stays as it is. The move may land
    /// a little later; until then `position(atLocal:)` still reports the old course.
    func seek(to positionMs: Double) async

    /// Sets the playback rate (1.0 is normal speed; the engine stays within ±5 %).
    func setRate(_ rate: Double) async

    /// The position at local instant `atLocal` (now or shortly before/after, extrapolated);
    /// the held position while paused; nil when nothing is loaded.
    func position(atLocal: Double) async -> Double?

    /// The `Track.id` of the loaded track, nil when none (or while loading).
    var loadedTrackId: String? { get async }

    /// True while audio is advancing.
    var isPlaying: Bool { get async }

    /// How long after a sample leaves the player it is heard, in ms: the audio path's
    /// reported latency (AVAudioSession's `outputLatency` + `ioBufferDuration`, a Bluetooth
    /// route's delay), already smoothed. `SyncEngine` starts and measures that much ahead.
    var outputLatencyMs: Double { get async }
}

extension Player {
    /// A player that cannot hold a second track loads the next one when it is due.
    public func preload(_ track: Track) async {}

    /// A player that knows no latency of its output path reports none.
    public var outputLatencyMs: Double { get async { 0 } }
}
