import Foundation
import JamProtocol

/// What a `SyncEngine` is doing and how well it follows the timeline.
public struct SyncStatus: Hashable, Sendable {
    /// The engine's phase.
    public enum Phase: String, Hashable, Sendable {
        /// Nothing announced yet.
        case idle
        /// Loading the current item.
        case loading
        /// Loaded and waiting for the commit.
        case ready
        /// Waiting for the first clock sync before it can schedule.
        case waitingForClock
        /// A start is scheduled for a future instant.
        case scheduled
        /// Playing and being corrected.
        case playing
        /// Paused at the timeline's position.
        case paused
        /// Nothing plays (stopped, ended, or the item is over).
        case stopped
        /// The current item failed to load.
        case loadFailed
    }

    /// The current item's epoch.
    public var epoch: Int64?
    /// The current queue item.
    public var itemId: ItemID?
    /// What the engine is doing.
    public var phase: Phase = .idle
    /// The last measured playback error (player position − timeline position), ms; positive = ahead.
    public var lastErrorMs: Double?
    /// Local instant of that measurement.
    public var lastMeasuredAt: Double?
    /// The rate the player runs at.
    public var rate: Double = 1
    /// Error measurements taken.
    public var measurements = 0
    /// Rate changes made to correct an error.
    public var rateCorrections = 0
    /// Seeks made to correct a large error.
    public var seeks = 0
    /// Correction seeks that never showed up in the position.
    public var seekTimeouts = 0
    /// `play(from:atLocal:)` commands issued (starts, resumes, seeks on the timeline).
    public var starts = 0
    /// Events dropped for an old epoch (or an epoch the engine cannot follow).
    public var droppedEvents = 0
    /// Loads that failed.
    public var loadFailures = 0
    /// The seek latency seen on the last correction seek, ms.
    public var observedSeekLatencyMs: Double?
    /// `syncReport`s sent.
    public var reportsSent = 0
    /// The output latency the engine last scheduled for, ms.
    public var outputLatencyMs: Double = 0
    /// This device's manual or calibrated delay, ms.
    public var deviceDelayMs: Double = 0
    /// Times a host asked this device to re-sync.
    public var resyncs = 0
    /// Room calibrations this device sounded its probe in.
    public var calibrationProbes = 0

    /// Creates an idle status.
    public init() {}
}
