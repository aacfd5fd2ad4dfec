import JamProtocol
import Logging

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

    /// Creates an idle status.
    public init() {}
}

/// Drives a `Player` so it follows the server's timeline.
///
/// Feeding: hand every realtime envelope to `handle(_:)` in arrival order, awaiting
/// each call (it picks the timeline events and ignores the rest); run
/// `run(sleeper:)` alongside for drift correction and `syncReport`s, and
/// `ClockSync.run` for the clock. Pongs are best recorded straight from the socket
/// reader (`clockSync.record(pong, receivedAt: clock.now())` the moment the frame is
/// read), since `handle` may wait behind a load; `handle` records the ones it gets.
/// All local instants come from `clock`, the same clock `clockSync` and the player use.
///
/// Events update the last-known `PlaybackTimeline` at once; the player is then brought
/// to it by one driver at a time (a call arriving while the player is busy, e.g.
/// loading, leaves the new target to the running driver), so interleaved calls never
/// act on an outdated target. Without a clock estimate yet, the engine loads but
/// starts nothing until `correct()` (i.e. `run`) finds the clock synchronised.
public actor SyncEngine {
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

        /// Creates a configuration with the defaults.
        public init() {}
    }

    struct PendingSeek: Sendable {
        var issuedAt: Double
        var target: Double
        var actualAtIssue: Double
        var errorAtIssue: Double
    }

    private let player: any Player
    private let clockSync: ClockSync
    private let clock: any MonotonicClock
    private let send: @Sendable (ClientCommand) async -> Void
    private let configuration: Configuration
    private let logger: Logger

    /// The current item's last-known timeline; nil when nothing is current.
    public private(set) var timeline: PlaybackTimeline?
    /// The item announced to follow the current one (gapless), if any.
    public private(set) var upNext: PlaybackTimeline?
    /// What the engine is doing and how well it follows.
    public private(set) var status = SyncStatus()

    private var epoch: Int64 = .min
    private var startWhilePreparing = false
    private var generation = 0
    private var drivenGeneration = 0
    private var driving = false
    /// The course last commanded to the player.
    private var followed: PlaybackTimeline?
    private var readySentEpoch: Int64?
    private var failedLoadEpoch: Int64?
    private var measureNotBefore = -Double.infinity
    private var scheduledStartLocal: Double?
    private var pendingSeek: PendingSeek?
    private var correctionDeadline: Double?
    private var seekLatencyEstimate: Double
    private var seekLatencyObserved = false

    /// Creates an engine.
    /// - Parameter send: sends a command on the realtime socket (`ready`, `syncReport`).
    public init(
        player: any Player, clockSync: ClockSync, clock: any MonotonicClock,
        send: @escaping @Sendable (ClientCommand) async -> Void, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "openjam.sync")
    ) {
        self.player = player
        self.clockSync = clockSync
        self.clock = clock
        self.send = send
        self.configuration = configuration
        self.logger = logger
        self.seekLatencyEstimate = configuration.assumedSeekLatencyMs
    }

    // MARK: - Events

    /// Applies one realtime envelope. Await each call before handing in the next one.
    /// Returns once the player has been brought to the new timeline (a load included).
    public func handle(_ envelope: ServerEnvelope) async {
        let changed: Bool
        switch envelope.event {
        case .stateSync(let view): changed = apply(view)
        case .playPrepare(let prepare): changed = apply(prepare)
        case .playCommit(let commit): changed = apply(commit)
        case .pause(let change): changed = applyChange(change, kind: "pause") { $0.paused(change) }
        case .resume(let change): changed = applyChange(change, kind: "resume") { $0.resumed(change) }
        case .seek(let change): changed = applyChange(change, kind: "seek") { $0.sought(change) }
        case .stopped(let stopped): changed = apply(stopped)
        case .sessionEnded:
            timeline = nil
            upNext = nil
            changed = true
        case .pong(let pong):
            // Better: record pongs straight from the socket with the receive instant.
            await clockSync.record(pong, receivedAt: clock.now())
            changed = false
        default:
            changed = false
        }
        if changed {
            generation &+= 1
            status.epoch = timeline?.epoch
            status.itemId = timeline?.itemId
        }
        await drive()
    }

    private func apply(_ view: SessionView) -> Bool {
        failedLoadEpoch = nil // a snapshot (e.g. after a reconnect) retries a failed load
        timeline = view.nowPlaying.map(PlaybackTimeline.init)
        upNext = view.upNext.map(PlaybackTimeline.init)
        if let nowPlaying = view.nowPlaying { epoch = nowPlaying.epoch }
        startWhilePreparing = true
        return true
    }

    private func apply(_ prepare: PlayPrepare) -> Bool {
        if prepare.epoch < epoch { return drop("playPrepare", epoch: prepare.epoch) }
        if prepare.epoch == epoch {
            // A repeat for the current item: only a preparing start can still move.
            guard var current = timeline, current.state == .preparing, current.itemId == prepare.item.id else {
                return drop("playPrepare", epoch: prepare.epoch)
            }
            current.anchorMs = Double(prepare.startAt)
            timeline = current
            return true
        }
        if announcesUpNext(prepare) {
            upNext = PlaybackTimeline(prepare)
            return false
        }
        timeline = PlaybackTimeline(prepare)
        epoch = prepare.epoch
        startWhilePreparing = false
        if let next = upNext, next.epoch <= prepare.epoch { upNext = nil }
        return true
    }

    /// A `playPrepare` with no `previous` for the epoch after a playing item, starting
    /// at (or after) its end, announces the gapless next item; the current one plays on.
    private func announcesUpNext(_ prepare: PlayPrepare) -> Bool {
        guard prepare.previous == nil, let current = timeline, current.state == .playing,
            prepare.epoch == current.epoch + 1, let end = current.endsAtServer
        else { return false }
        return Double(prepare.startAt) >= end - configuration.upNextToleranceMs
    }

    private func apply(_ commit: PlayCommit) -> Bool {
        if commit.epoch < epoch { return drop("playCommit", epoch: commit.epoch) }
        if commit.epoch > epoch {
            guard let next = upNext, next.epoch == commit.epoch, next.itemId == commit.itemId else {
                logger.warning("playCommit for an item never prepared", metadata: ["sync.epoch": "\(commit.epoch)"])
                return drop("playCommit", epoch: commit.epoch)
            }
            timeline = next.committed(commit)
            upNext = nil
            epoch = commit.epoch
            return true
        }
        guard let current = timeline, current.itemId == commit.itemId else {
            return drop("playCommit", epoch: commit.epoch)
        }
        timeline = current.committed(commit)
        return true
    }

    private func applyChange(
        _ change: TimelineChange, kind: String, _ transform: (PlaybackTimeline) -> PlaybackTimeline
    ) -> Bool {
        guard change.epoch == epoch, let current = timeline else { return drop(kind, epoch: change.epoch) }
        timeline = transform(current)
        return true
    }

    private func apply(_ stopped: PlaybackStopped) -> Bool {
        if stopped.epoch < epoch { return drop("stopped", epoch: stopped.epoch) }
        epoch = stopped.epoch
        timeline = nil
        upNext = nil
        return true
    }

    private func drop(_ kind: String, epoch dropped: Int64) -> Bool {
        status.droppedEvents += 1
        logger.debug(
            "dropping a stale timeline event",
            metadata: ["sync.event": "\(kind)", "sync.eventEpoch": "\(dropped)", "sync.epoch": "\(epoch)"])
        return false
    }

    // MARK: - Driving the player

    /// Brings the player to the latest timeline; one driver at a time.
    private func drive() async {
        guard !driving else { return }
        driving = true
        defer { driving = false }
        while drivenGeneration != generation {
            let target = generation
            guard await bringPlayer(to: target) else { return } // waits for the clock; `correct()` retries
            if target == generation { drivenGeneration = target }
        }
    }

    /// One attempt; false when it has to wait for the first clock sync.
    private func bringPlayer(to target: Int) async -> Bool {
        guard let wanted = timeline else {
            followed = nil
            resetCorrection()
            await player.pause()
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
            }
            status.phase = .stopped
            return true
        }
        if await player.loadedTrackId != wanted.track.id {
            if failedLoadEpoch == wanted.epoch { return true }
            followed = nil
            resetCorrection()
            status.phase = .loading
            do {
                try await player.load(wanted.track)
            } catch {
                if generation == target {
                    failedLoadEpoch = wanted.epoch
                    status.loadFailures += 1
                    status.phase = .loadFailed
                }
                logger.error(
                    "loading the current item failed",
                    metadata: ["sync.epoch": "\(wanted.epoch)", "track.id": "\(wanted.track.id)", "sync.error": "\(error)"])
                return true
            }
        }
        if wanted.state == .preparing, readySentEpoch != wanted.epoch, timeline?.epoch == wanted.epoch {
            readySentEpoch = wanted.epoch
            await send(.ready(Ready(epoch: wanted.epoch)))
        }
        guard generation == target else { return true }
        guard let estimate = await clockSync.estimate else {
            status.phase = .waitingForClock
            return false
        }
        guard generation == target else { return true }
        let now = clock.now()
        switch wanted.state {
        case .preparing where !startWhilePreparing:
            status.phase = .ready
        case .preparing, .playing:
            var course = wanted
            course.state = .playing
            await follow(course, estimate: estimate, now: now)
        case .paused:
            if let followed, followed.hasSameCourse(as: wanted) { return true }
            followed = wanted
            resetCorrection()
            scheduledStartLocal = nil
            await player.pause()
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
            }
            let position = await player.position(atLocal: now)
            if position.map({ abs($0 - wanted.positionMs) > 0.5 }) ?? true {
                await player.seek(to: wanted.positionMs)
            }
            status.phase = .paused
        }
        return true
    }

    private func follow(_ course: PlaybackTimeline, estimate: ClockEstimate, now: Double) async {
        let serverNow = estimate.serverTime(atLocal: now)
        if let end = course.endsAtServer, serverNow >= end {
            // Over already: nothing to play until the server moves on.
            followed = course
            resetCorrection()
            await player.pause()
            status.phase = .stopped
            return
        }
        if let followed {
            if followed.hasSameCourse(as: course) { return }
            let restatement =
                followed.state == .playing && followed.epoch == course.epoch && course.anchorMs <= serverNow
                && abs((followed.positionMs - followed.anchorMs) - (course.positionMs - course.anchorMs))
                    < configuration.restateToleranceMs
            if restatement, await player.isPlaying {
                // The correction loop will absorb the difference smoothly.
                self.followed = course
                return
            }
        }
        resetCorrection()
        if status.rate != 1 {
            await player.setRate(1)
            status.rate = 1
        }
        let startLocal = estimate.localTime(atServer: course.anchorMs)
        await player.play(from: course.positionMs, atLocal: startLocal)
        followed = course
        status.starts += 1
        scheduledStartLocal = startLocal
        measureNotBefore = max(now, startLocal) + configuration.settleAfterStartMs
        status.phase = startLocal > now ? .scheduled : .playing
        logger.debug(
            "following the timeline",
            metadata: [
                "sync.epoch": "\(course.epoch)", "sync.positionMs": "\(course.positionMs)",
                "sync.startInMs": "\(startLocal - now)",
            ])
    }

    private func resetCorrection() {
        pendingSeek = nil
        correctionDeadline = nil
    }

    // MARK: - Correction

    /// One correction step: measures the error (player position − timeline position at
    /// the same local instant) and corrects it: nothing inside the dead band, a
    /// temporary rate change for small errors, a seek for large ones (then no
    /// measurement until the seek has landed and settled).
    public func correct() async {
        if drivenGeneration != generation { await drive() }
        guard !driving, drivenGeneration == generation else { return }
        guard let wanted = timeline, wanted.state == .playing, let estimate = await clockSync.estimate else { return }
        let target = generation
        let now = clock.now()
        let serverNow = estimate.serverTime(atLocal: now)
        guard wanted.isAdvancing(atServer: serverNow) else { return }
        if let start = scheduledStartLocal, now >= start {
            scheduledStartLocal = nil
            status.phase = .playing
        }
        if let seek = pendingSeek {
            await checkLanding(of: seek, now: now)
            return
        }
        guard now >= measureNotBefore else { return }
        guard await player.loadedTrackId == wanted.track.id, await player.isPlaying,
            let actual = await player.position(atLocal: now), generation == target, !driving
        else { return }
        let expected = wanted.position(atServer: serverNow)
        let error = actual - expected
        status.lastErrorMs = error
        status.lastMeasuredAt = now
        status.measurements += 1

        if abs(error) >= configuration.seekThresholdMs {
            correctionDeadline = nil
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
                guard generation == target, !driving else { return }
            }
            let seekTarget = wanted.position(atServer: estimate.serverTime(atLocal: now + seekLatencyEstimate))
            status.seeks += 1
            pendingSeek = PendingSeek(issuedAt: now, target: seekTarget, actualAtIssue: actual, errorAtIssue: error)
            await player.seek(to: seekTarget)
            logger.info(
                "large playback error: seeking",
                metadata: ["sync.errorMs": "\(error)", "sync.targetMs": "\(seekTarget)", "sync.epoch": "\(wanted.epoch)"])
            return
        }
        let band = correctionDeadline == nil ? configuration.deadBandMs : configuration.targetBandMs
        if abs(error) <= band {
            correctionDeadline = nil
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
            }
            return
        }
        var deadline = correctionDeadline ?? now + configuration.correctionHorizonMs
        if deadline - now < configuration.correctionIntervalMs / 2 { deadline = now + configuration.correctionHorizonMs }
        correctionDeadline = deadline
        let remaining = max(deadline - now, configuration.correctionIntervalMs)
        let limit = configuration.maxRateDeviation
        let rate = min(1 + limit, max(1 - limit, 1 - error / remaining))
        if abs(rate - status.rate) >= configuration.minRateStep {
            status.rate = rate
            status.rateCorrections += 1
            await player.setRate(rate)
        }
    }

    private func checkLanding(of seek: PendingSeek, now: Double) async {
        guard let actual = await player.position(atLocal: now) else { return }
        let oldCourse = seek.actualAtIssue + (now - seek.issuedAt)
        let moved = abs(actual - oldCourse) > max(abs(seek.errorAtIssue) / 2, configuration.deadBandMs)
        if moved {
            let landedAt = now - (actual - seek.target)
            let observed = min(max(0, landedAt - seek.issuedAt), configuration.seekLandingTimeoutMs)
            seekLatencyEstimate = seekLatencyObserved ? (seekLatencyEstimate + observed) / 2 : observed
            seekLatencyObserved = true
            status.observedSeekLatencyMs = observed
            pendingSeek = nil
            measureNotBefore = now + configuration.settleAfterSeekMs
        } else if now - seek.issuedAt > configuration.seekLandingTimeoutMs {
            logger.warning("a correction seek never showed up", metadata: ["sync.targetMs": "\(seek.target)"])
            status.seekTimeouts += 1
            pendingSeek = nil
            measureNotBefore = now + configuration.settleAfterSeekMs
        }
    }

    // MARK: - Loop

    /// Corrects every `correctionIntervalMs` and sends a `syncReport` every
    /// `reportIntervalMs` (the first as soon as the clock is synchronised). Ends when
    /// the task is cancelled (the sleeper throws).
    public func run(sleeper: any Sleeper) async throws {
        var nextReport = -Double.infinity
        while true {
            try Task.checkCancellation()
            await correct()
            let now = clock.now()
            if now >= nextReport, await report() { nextReport = now + configuration.reportIntervalMs }
            try await sleeper.sleep(ms: configuration.correctionIntervalMs)
        }
    }

    /// Sends one `syncReport`; false when the clock is not synchronised yet.
    /// `offsetMs` is the clock offset, `errorMs` half the best round trip (the server reads
    /// `2 × errorMs` as the device's round trip) and `driftMs` the last measured playback
    /// error (player position − timeline position).
    @discardableResult
    public func report() async -> Bool {
        guard let estimate = await clockSync.estimate else { return false }
        let now = clock.now()
        let report = SyncReport(
            epoch: max(0, epoch), offsetMs: estimate.offset(atLocal: now), errorMs: estimate.halfRoundTripBound(atLocal: now),
            driftMs: status.lastErrorMs ?? 0)
        await send(.syncReport(report))
        status.reportsSent += 1
        return true
    }
}
