import Foundation
import JamProtocol
import Logging


/// Estimates `offset = serverTime − localMonotonicTime` from `ping`/`pong` exchanges.
///
/// Each exchange gives four timestamps: t0 (local send), t1 (server receive),
/// t2 (server send), t3 (local receive), with round trip
/// `delay = (t3 − t0) − (t2 − t1)` and the classic estimate
/// `((t1 − t0) + (t2 − t3)) / 2`. Because neither leg of the path can take negative
/// time, every exchange is also a pair of hard constraints: the offset at t0 is at
/// most `t1 − t0`, and the offset at t3 is at least `t2 − t3`.
///
/// The offset is modelled as a straight line `offset(t) = a + k·(t − r)` (k: the drift,
/// r: the newest sample's receive instant):
/// - **Offset**: the constraints of the samples of the last `filterBursts` bursts (3
///   until the drift is fitted, then 8: 1–2 minutes of history) are moved to r along the
///   drift estimate and intersected; the estimate is the middle
///   of what remains. Within one burst this is the intersection of the samples'
///   intervals, which lies inside the lowest-delay sample's interval: the NTP clock
///   filter, refined by the other samples' lowest up and down legs.
/// - **Drift**: the slope the two delay floors share over the bursts of the last `windowMs`
///   (the one at which the upper and lower constraints leave the most room), a
///   linear-programming fit on the lowest-delay legs of every burst in both directions,
///   used once the window spans `minDriftSpanMs`; until then the prior's centre (0, or
///   the value kept across `reset()`).
/// - **Bound**: the offsets at r that any line satisfying every constraint of the window
///   allows, for drifts within what the samples and a prior of ±100 ppm permit.
///   It contains the true offset on any path, symmetric or not, as long as the two
///   clocks keep a constant relative rate over the window, and grows with the distance
///   from r by that drift range. A window no straight line fits (the server's clock was
///   stepped or slewed) loses its oldest bursts until one does.
public actor ClockSync {
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
        /// Interval between bursts while not yet synchronised (no answer yet), ms.
        public var unsyncedRetryMs: Double = 1_000
        /// A ping sent more than this long after the previous one starts a new burst, ms.
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

    struct Sample: Sendable {
        var t0: Double, t1: Double, t2: Double, t3: Double
        var delay: Double { (t3 - t0) - (t2 - t1) }
    }

    struct Burst: Sendable {
        var id: Int
        var samples: [Sample] = []
        /// When the burst's first answered ping left.
        var start: Double { samples.lazy.map(\.t0).min() ?? .infinity }
    }

    private let clock: any MonotonicClock
    private let configuration: Configuration
    private let logger: Logger

    private var pending: [Double: Int] = [:]
    private var lastPingAt: Double = -.infinity
    private var nextBurstId = 0
    private var currentBurstId = -1
    private var bursts: [Burst] = []

    /// Centre of the drift prior, ms per second (0, or the estimate kept across `reset()`).
    private var priorDrift: Double = 0
    private var drift: Double = 0
    private var driftUncertainty: Double
    private var driftFitted = false
    private var cached: ClockEstimate?
    private var resyncRequested = false
    /// The next burst is the first since the start or a `reset()` (`firstBurstSize` pings).
    private var firstBurstDue = true

    /// Pongs that answered no ping of ours (or one forgotten by `reset()`).
    public private(set) var ignoredPongs = 0
    /// Samples dropped for a negative delay or receive time before send time.
    public private(set) var rejectedSamples = 0
    /// Samples accepted since the start (or the last `reset()`).
    public private(set) var acceptedSamples = 0
    /// Bursts begun (a ping more than `burstGapMs` after the previous one begins one).
    public private(set) var burstCount = 0
    /// Bursts dropped because no straight line fitted the window with them in it.
    public private(set) var inconsistentBursts = 0

    /// Creates a clock synchroniser reading local time from `clock`.
    public init(
        clock: any MonotonicClock = SystemMonotonicClock(), configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "openjam.clocksync")
    ) {
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        self.driftUncertainty = configuration.driftPriorUncertaintyMsPerSecond
    }

    // MARK: - Reading the estimate

    /// The current estimate, or nil before the first sample (and after `reset()`).
    public var estimate: ClockEstimate? { cached }

    /// True once at least one exchange since the start (or the last `reset()`) gave a sample.
    public var isSynchronised: Bool { cached != nil }

    /// `serverTime − localTime` now, drift-corrected; nil when not synchronised.
    public var offsetMs: Double? { cached?.offset(atLocal: clock.now()) }

    /// A bound on the error of `offsetMs` now: how far the offsets the samples still
    /// allow reach from the estimate (at most one best round trip, typically half of it
    /// or less), plus the drift range times the age of the newest sample.
    public var errorBoundMs: Double? { cached?.errorBound(atLocal: clock.now()) }

    /// Half the lowest round trip among the recent samples plus drift uncertainty since
    /// then: the classic NTP bound. `syncReport.errorMs` carries this, as the server
    /// reads `2 × errorMs` as the device's round trip.
    public var halfRoundTripMs: Double? { cached?.halfRoundTripBound(atLocal: clock.now()) }

    /// The drift estimate: ms of offset change per second of local time (0.05 = 50 ppm).
    public var driftMsPerSecond: Double { drift }

    /// The largest error of `driftMsPerSecond` that the samples and the prior still allow
    /// (a hard bound, used to extrapolate `errorBoundMs`; the typical error is far smaller).
    public var driftUncertaintyMsPerSecond: Double { driftUncertainty }

    /// True once the drift comes from the samples (the window is long enough) rather than the prior.
    public var hasDriftFit: Bool { driftFitted }

    /// The server instant for local instant `t`; nil when not synchronised.
    public func serverTime(atLocal t: Double) -> Double? { cached?.serverTime(atLocal: t) }

    /// The local instant for server instant `s`; nil when not synchronised.
    public func localTime(atServer s: Double) -> Double? { cached?.localTime(atServer: s) }

    /// The samples of the newest `filterBursts` bursts as (t0, t1, t2, t3): for diagnosis
    /// by the package's own benchmark, which knows the true offset.
    package var filterSamples: [(Double, Double, Double, Double)] {
        bursts.suffix(max(1, configuration.filterBursts)).flatMap(\.samples).map { ($0.t0, $0.t1, $0.t2, $0.t3) }
    }

    // MARK: - Exchanges

    /// Stamps a ping with the local time now and remembers it.
    public func makePing() -> Ping {
        var t0 = clock.now()
        if t0 <= lastPingAt { t0 = lastPingAt.nextUp } // unique keys even on a frozen test clock
        if t0 - lastPingAt > configuration.burstGapMs || currentBurstId < 0 {
            currentBurstId = nextBurstId
            nextBurstId += 1
            burstCount += 1
        }
        lastPingAt = t0
        prunePending(now: t0)
        pending[t0] = currentBurstId
        return Ping(clientSendTime: t0)
    }

    /// Records the answer to one of our pings, received at local instant `receivedAt`.
    /// Pongs for pings this instance did not send (or forgot, or already got) are
    /// ignored, and so are impossible samples (negative round trip).
    public func record(_ pong: Pong, receivedAt t3: Double) {
        guard let burstId = pending.removeValue(forKey: pong.clientSendTime) else {
            ignoredPongs += 1
            logger.debug("ignoring a pong for an unknown ping", metadata: ["sync.clientSendTime": "\(pong.clientSendTime)"])
            return
        }
        let sample = Sample(t0: pong.clientSendTime, t1: pong.serverReceiveTime, t2: pong.serverSendTime, t3: t3)
        guard [sample.t1, sample.t2, sample.t3].allSatisfy(\.isFinite), sample.t3 >= sample.t0, sample.t2 >= sample.t1,
            sample.delay >= 0
        else {
            rejectedSamples += 1
            logger.debug("rejecting an impossible clock sample", metadata: ["sync.delayMs": "\(sample.delay)"])
            return
        }
        acceptedSamples += 1
        if let index = bursts.firstIndex(where: { $0.id == burstId }) {
            bursts[index].samples.append(sample)
        } else {
            bursts.append(Burst(id: burstId, samples: [sample]))
            bursts.sort { $0.id < $1.id }
        }
        if let newest = bursts.last?.start {
            bursts.removeAll { $0.start <= newest - configuration.windowMs }
        }
        let keep = max(1, configuration.maxWindowBursts)
        if bursts.count > keep { bursts.removeFirst(bursts.count - keep) }
        recompute()
    }

    /// Forgets all samples and pending pings (after a reconnect: the new connection may
    /// reach another server node), keeps the drift estimate as the centre of the prior,
    /// and asks `run` for a burst now.
    public func reset() {
        pending.removeAll()
        bursts.removeAll()
        cached = nil
        acceptedSamples = 0
        firstBurstDue = true
        lastPingAt = -.infinity
        currentBurstId = -1
        resyncRequested = true
        priorDrift = drift
        driftUncertainty = configuration.driftPriorUncertaintyMsPerSecond
        driftFitted = false
    }

    /// The wait from the start of a burst begun at `now` to the next once synchronised:
    /// short while the window is young (`startupResyncIntervalMs`), then `resyncIntervalMs`.
    func resyncInterval(now: Double) -> Double {
        guard let oldest = bursts.first?.start, now - oldest >= configuration.startupMs else {
            return configuration.startupResyncIntervalMs
        }
        return configuration.resyncIntervalMs
    }

    /// The loop: a burst now, then a burst every `startupResyncIntervalMs` until the window
    /// spans `startupMs` and every `resyncIntervalMs` after (every `unsyncedRetryMs` while
    /// no pong came back), and one at once after `reset()`.
    /// Pongs arrive separately through `record(_:receivedAt:)`. Ends when the task is
    /// cancelled (the sleeper throws); a failing `send` is logged and retried later.
    public func run(send: @escaping @Sendable (Ping) async throws -> Void, sleeper: any Sleeper) async throws {
        while true {
            try Task.checkCancellation()
            resyncRequested = false
            let burstStart = clock.now()
            // The first burst is quick (a start may wait for it); later ones spread out.
            let spacing = isSynchronised ? configuration.steadyBurstSpacingMs : configuration.burstSpacingMs
            let count = firstBurstDue ? configuration.firstBurstSize : configuration.burstSize
            do {
                for index in 0..<max(1, count) {
                    if index > 0 { try await sleeper.sleep(ms: spacing) }
                    try await send(makePing())
                }
                // Sent in full, and no reset since: the next burst is an ordinary one.
                if !resyncRequested { firstBurstDue = false }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("clock sync ping failed", metadata: ["sync.error": "\(error)"])
            }
            while !resyncRequested {
                // The window's age when this burst began decides: one answer changes nothing mid-wait.
                let interval = isSynchronised ? resyncInterval(now: burstStart) : configuration.unsyncedRetryMs
                let wait = burstStart + interval - clock.now()
                if wait <= 0 { break }
                try await sleeper.sleep(ms: min(wait, configuration.pollIntervalMs))
            }
        }
    }

    // MARK: - Estimation

    private func prunePending(now: Double) {
        guard pending.count > 4 * configuration.burstSize else { return }
        pending = pending.filter { now - $0.key < configuration.pendingTimeoutMs }
    }

    private func recompute() {
        let searchRange = configuration.maxDriftMsPerSecond / 1000
        let prior = (low: (priorDrift - configuration.driftPriorUncertaintyMsPerSecond) / 1000,
                     high: (priorDrift + configuration.driftPriorUncertaintyMsPerSecond) / 1000)
        while true {
            let samples = bursts.flatMap(\.samples)
            guard let newest = samples.max(by: { $0.t3 < $1.t3 }) else {
                cached = nil
                return
            }
            let r = newest.t3
            let window = LineFit(samples: samples, reference: r)
            guard let slopes = window.slopes(searchRange: searchRange, slack: configuration.consistencySlackMs) else {
                if bursts.count > 1 {
                    inconsistentBursts += 1
                    logger.warning(
                        "clock samples no longer fit one line (server clock stepped?); dropping the oldest burst",
                        metadata: ["sync.bursts": "\(bursts.count)"])
                    bursts.removeFirst()
                } else {
                    // Inconsistent within one burst (impossible from an honest server): keep its best sample.
                    bursts[0].samples = [bursts[0].samples.min { $0.delay < $1.delay }!]
                }
                continue
            }
            // The hard range of drifts: what the samples allow, narrowed by the prior.
            var low = max(slopes.feasible.lowerBound, prior.low)
            var high = min(slopes.feasible.upperBound, prior.high)
            if low > high {
                low = slopes.feasible.lowerBound // the data contradict the prior: believe the data
                high = slopes.feasible.upperBound
            }
            // The drift estimate: the slopes of the lines hugging the lowest delays of
            // each direction, once the window is long enough for them to mean something.
            var slope = priorDrift / 1000
            let span = r - samples.map(\.t0).min()!
            driftFitted = bursts.count >= configuration.minDriftBursts && span >= configuration.minDriftSpanMs
            if driftFitted { slope = slopes.widest }
            slope = min(high, max(low, slope))
            drift = slope * 1000
            driftUncertainty = max(configuration.minDriftUncertaintyMsPerSecond, max(slope - low, high - slope) * 1000)
            // The offset: the recent samples' constraints moved to r along the drift.
            let filterBursts = driftFitted ? configuration.filterBursts : min(configuration.filterBursts, configuration.filterBurstsBeforeDriftFit)
            let recent = Array(bursts.suffix(max(1, filterBursts)).flatMap(\.samples))
            let filter = LineFit(samples: recent, reference: r, base: window.base)
            let offset = (filter.upper(slope) + filter.lower(slope)) / 2
            // The bound: every line the whole window allows within the drift range.
            let (lowest, highest) = window.offsetRange(slopes: low...high)
            let bound = max(0, offset - lowest, highest - offset)
            let best = recent.min { $0.delay < $1.delay }!
            let age = abs(r - (best.t0 + best.t3) / 2)
            cached = ClockEstimate(
                referenceLocal: r, offsetAtReference: offset + window.base, errorBoundAtReference: bound,
                halfRoundTripMs: best.delay / 2 + driftUncertainty / 1000 * age, driftMsPerSecond: drift,
                driftUncertaintyMsPerSecond: driftUncertainty)
            return
        }
    }
}
