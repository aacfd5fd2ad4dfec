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
    private let clock: any MonotonicClock
    let configuration: Configuration
    let logger: Logger

    var pending: [Double: Int] = [:]
    private var lastPingAt: Double = -.infinity
    private var nextBurstId = 0
    private var currentBurstId = -1
    var bursts: [Burst] = []

    /// Centre of the drift prior, ms per second (0, or the estimate kept across `reset()`).
    var priorDrift: Double = 0
    var drift: Double = 0
    var driftUncertainty: Double
    var driftFitted = false
    var cached: ClockEstimate?
    private var resyncRequested = false
    /// The next burst is the first since the start or a `reset()` (`firstBurstSize` pings).
    private var firstBurstDue = true

    /// Pongs that answered no ping of ours (or one forgotten by `reset()`).
    public private(set) var ignoredPongs = 0
    /// Samples dropped for a negative delay or receive time before send time.
    public private(set) var rejectedSamples = 0
    /// Samples accepted since the start (or the last `reset()`).
    public private(set) var acceptedSamples = 0
    /// How many times `reset()` has dropped the samples: a user of the estimate that saw
    /// another count knows it starts again from its roughest samples.
    public private(set) var resets = 0
    /// Bursts begun (a ping `burstGapMs` or more after the previous one begins one).
    public private(set) var burstCount = 0
    /// Bursts dropped because no straight line fitted the window with them in it.
    public internal(set) var inconsistentBursts = 0

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
        if t0 - lastPingAt >= configuration.burstGapMs || currentBurstId < 0 {
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
            bursts[index].append(sample)
        } else {
            bursts.append(Burst(id: burstId, first: sample))
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
        resets += 1
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
    /// spans `startupMs` and every `resyncIntervalMs` after (`unsyncedRetryMs` after each
    /// burst's last ping while no pong came back), and one at once after `reset()`, which
    /// also ends the burst under way.
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
                    if index > 0 {
                        try await sleeper.sleep(ms: spacing)
                        // A reset (a reconnect) abandons this burst for a new first one: both in
                        // full would be up to twice the pings the server allows a socket at once.
                        if resyncRequested { break }
                    }
                    try await send(makePing())
                }
                // Sent in full, and no reset since: the next burst is an ordinary one.
                if !resyncRequested { firstBurstDue = false }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("clock sync ping failed", metadata: ["sync.error": "\(error)"])
            }
            let burstEnd = clock.now()
            while !resyncRequested {
                // The window's age when this burst began decides: one answer changes nothing mid-wait.
                let due = isSynchronised ? burstStart + resyncInterval(now: burstStart) : burstEnd + configuration.unsyncedRetryMs
                let wait = due - clock.now()
                if wait <= 0 { break }
                try await sleeper.sleep(ms: min(wait, configuration.pollIntervalMs))
            }
        }
    }
}
