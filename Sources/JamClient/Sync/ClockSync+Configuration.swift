import Foundation

extension ClockSync {
    /// Tuning knobs. Defaults suit a phone on Wi-Fi or cellular.
    public struct Configuration: Sendable {
        /// Exchanges per burst. The offset comes from the fastest exchanges, so more samples
        /// mean a smaller error: at 40 ± 20 ms jitter, 8 gave 7.6 ms p99 and 24 give ~3 ms
        /// after one burst (see docs/PERFORMANCE.md); 24 pings are ~2 kB every 15 s.
        public var burstSize: Int = 24
        /// Exchanges in the first burst after the start or a `reset()`. A device joining
        /// mid-song starts on this burst alone: 48 pings 30 ms apart put its offset error at
        /// ~2.1 ms p99 where 24 pings 25 ms apart gave ~4.2 ms, for 0.8 s more wait
        /// (docs/PERFORMANCE.md).
        public var firstBurstSize: Int = 48
        /// Spacing of the pings within the first burst, ms: a device joining mid-song waits for it.
        public var burstSpacingMs: Double = 30
        /// Spacing of the pings within later bursts, ms. On a path that delivers in order
        /// (TCP), a ping 25 ms behind a late one waits for it, which keeps samples off the
        /// delay floor; 100 ms apart they rarely wait, and the steady offset error drops by
        /// a third with the same pings (docs/PERFORMANCE.md).
        public var steadyBurstSpacingMs: Double = 100
        /// The first start waits for a full burst of samples, at most this long, ms: a device
        /// joining mid-song otherwise starts on its first, roughest sample (docs/PERFORMANCE.md).
        public var firstStartWaitMs: Double = 2_000
        /// Interval between bursts once synchronised and the window spans `startupMs`, ms.
        public var resyncIntervalMs: Double = 15_000
        /// Interval between bursts while the window spans less than `startupMs` (after the
        /// start, a `reset()` or a stepped server clock), ms. The drift, and with it the
        /// offset moved along it, is limited by the lowest delays in the window: twice the
        /// bursts in the first two minutes take the offset error 2–4 minutes in from 1.1 to
        /// 0.7 ms p99 over an in-order path, for 192 more pings once (docs/PERFORMANCE.md).
        public var startupResyncIntervalMs: Double = 7_500
        /// How long the quick bursts last: until the oldest burst in the window began this
        /// long ago, ms.
        public var startupMs: Double = 120_000
        /// While no pong has come back yet, the wait from a burst's last ping to the next
        /// burst, ms: the first burst (1.41 s) is longer than this, and a wait counted from its
        /// start would send the retry straight after it.
        public var unsyncedRetryMs: Double = 1_000
        /// A ping sent this long or longer after the previous one starts a new burst, ms.
        public var burstGapMs: Double = 1_000
        /// The newest bursts whose samples give the offset (and `halfRoundTripMs`) once the
        /// drift is fitted: 2 minutes of history (1 while the bursts are quick) moved along
        /// the fitted drift. At 40 ± 20 ms
        /// with a 50 ppm drift, 6 halve the steady p99 of 3, and 8 take a little more off
        /// once the drift comes from the joint floor fit (docs/PERFORMANCE.md).
        public var filterBursts: Int = 8
        /// The same before the drift is fitted: older bursts moved along a drift that is
        /// only the prior's centre would bring that drift's error in.
        public var filterBurstsBeforeDriftFit: Int = 3
        /// The window the drift is estimated from and the bound checked against: bursts that
        /// began less than this long before the newest one, ms (16 bursts 15 s apart).
        public var windowMs: Double = 240_000
        /// At most this many bursts in the window, whatever their spacing: bounds the work per pong.
        public var maxWindowBursts: Int = 48
        /// The drift is estimated once the window holds this many bursts...
        public var minDriftBursts: Int = 6
        /// ...spanning at least this long, ms. Before, the prior's centre is used.
        public var minDriftSpanMs: Double = 75_000
        /// Drift range assumed before the data narrow it: ±this, ms of offset per second
        /// (0.1 = 100 ppm, which covers two ordinary crystal oscillators).
        public var driftPriorUncertaintyMsPerSecond: Double = 0.1
        /// Smallest drift uncertainty used to extrapolate the bound, ms/s (0.002 = 2 ppm).
        public var minDriftUncertaintyMsPerSecond: Double = 0.002
        /// The drift search range: ±this, ms/s.
        public var maxDriftMsPerSecond: Double = 1.0
        /// Violations of the straight-line model up to this size are tolerated, ms.
        public var consistencySlackMs: Double = 0.01
        /// Unanswered pings are forgotten after this long, ms.
        public var pendingTimeoutMs: Double = 10_000
        /// Granularity of the wait between bursts (how soon `reset()` is noticed), ms.
        public var pollIntervalMs: Double = 250

        /// Creates a configuration with the defaults.
        public init() {}
    }
}
