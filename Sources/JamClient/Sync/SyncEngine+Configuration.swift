import Foundation

extension SyncEngine {
    /// Tuning knobs.
    public struct Configuration: Sendable {
        /// How often `run` measures and corrects, ms.
        public var correctionIntervalMs: Double = 250
        /// How often `run` sends a `syncReport`, ms.
        public var reportIntervalMs: Double = 5_000
        /// Errors up to this size are left alone (rate 1.0), ms.
        public var deadBandMs: Double = 3
        /// A correction under way continues until the error is this small, ms.
        public var targetBandMs: Double = 0.75
        /// Errors of this size or more are corrected by a seek; smaller ones by the rate, ms.
        public var seekThresholdMs: Double = 100
        /// The rate stays within 1 ± this.
        public var maxRateDeviation: Double = 0.05
        /// A rate correction is sized to remove the error over this long, ms.
        public var correctionHorizonMs: Double = 2_000
        /// After a correction seek has landed, wait this long before measuring again, ms.
        public var settleAfterSeekMs: Double = 300
        /// After a start (or resume, or timeline seek), wait this long before measuring, ms.
        public var settleAfterStartMs: Double = 250
        /// Seek latency assumed until one has been observed, ms.
        public var assumedSeekLatencyMs: Double = 50
        /// Stop waiting for a correction seek to show after this long, ms.
        public var seekLandingTimeoutMs: Double = 3_000
        /// Smallest rate change worth sending to the player.
        public var minRateStep: Double = 0.0002
        /// A `playPrepare` whose start is this close to the end of the playing item (or
        /// later) while it plays announces the next item, not a change of item, ms.
        public var upNextToleranceMs: Double = 1_000
        /// A `stateSync` restating the followed course within this much is left to the
        /// rate correction instead of restarting the player, ms.
        public var restateToleranceMs: Double = 50
        /// A player that is still not playing this long after a start should have settled
        /// (its start never came, or its audio stopped) is started on the course again, ms.
        public var stalledStartRetryMs: Double = 1_500
        /// An item that failed to load is tried again this long after the failure while it
        /// is still current (a network that dropped for a moment), doubling with each failure
        /// in a row up to `loadRetryCapMs`, ms.
        public var loadRetryBaseMs: Double = 2_000
        /// The longest wait between two tries of a load that keeps failing, ms.
        public var loadRetryCapMs: Double = 30_000
        /// Whether this device can record the room and answer a calibration as its listener
        /// (`calibrationReport`). This library sounds the probes but records nothing, so only
        /// an app that listens itself sets it; the reports say it, and hosts are offered only
        /// devices that can.
        public var canListen = false

        /// Creates a configuration with the defaults.
        public init() {}
    }
}
