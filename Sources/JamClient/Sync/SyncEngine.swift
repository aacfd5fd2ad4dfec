import JamProtocol
import Logging


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

    struct PendingSeek: Sendable {
        var issuedAt: Double
        var target: Double
        var actualAtIssue: Double
        var errorAtIssue: Double
    }

    let player: any Player
    let clockSync: ClockSync
    let clock: any MonotonicClock
    let send: @Sendable (ClientCommand) async -> Void
    let configuration: Configuration
    let logger: Logger
    /// This device, to pick its delay out of the session and answer a host's re-sync.
    public nonisolated let device: DeviceRef?

    /// The current item's last-known timeline; nil when nothing is current.
    public private(set) var timeline: PlaybackTimeline?
    /// The item announced to follow the current one (gapless), if any.
    public private(set) var upNext: PlaybackTimeline?
    /// What the engine is doing and how well it follows.
    public internal(set) var status = SyncStatus()

    var epoch: Int64 = .min
    var startWhilePreparing = false
    var generation = 0
    var drivenGeneration = 0
    var driving = false
    /// The course last commanded to the player.
    var followed: PlaybackTimeline?
    /// Runs begun (`begin()`): a stop from a run that a later one replaced does nothing.
    var runsBegun = 0
    /// Bumped when the player must be started again whatever it follows (a host's resync): a
    /// start that was under way across it must not record its course as followed.
    var restartsAsked = 0
    var readySentEpoch: Int64?
    /// Told of every schedule change while a load is under way, so it can give up on a track
    /// no longer wanted.
    var scheduleChanged: AsyncStream<Void>.Continuation?
    /// The current item's failed loads, and when it is tried again.
    var loadRetry: LoadRetry?
    var measureNotBefore = -Double.infinity
    var scheduledStartLocal: Double?
    var pendingSeek: PendingSeek?
    var correctionDeadline: Double?
    var seekLatencyEstimate: Double
    var seekLatencyObserved = false
    /// The up-next item handed to `Player.preload` last, so each is preloaded once.
    var preloadedItemId: ItemID?
    /// When the engine began waiting for its clock's first burst (nil: not yet asked).
    var clockWaitSince: Double?
    /// The first burst came, or the wait for it ran out: starts use whatever estimate there is.
    var clockWaitOver = false
    /// `ClockSync.resets` when the wait was last over: a reset (a reconnect) starts it again.
    var clockResetsSeen = 0
    /// The calibration whose probes are scheduled, so a plan sent again plays nothing twice.
    var lastCalibrationId: String?

    /// Creates an engine.
    /// - Parameters:
    ///   - send: sends a command on the realtime socket (`ready`, `syncReport`).
    ///   - device: this device (its member and stable id): its delay in the session is
    ///     applied, its reports name it, and a host's `resync` for it is followed.
    public init(
        player: any Player, clockSync: ClockSync, clock: any MonotonicClock,
        send: @escaping @Sendable (ClientCommand) async -> Void, configuration: Configuration = Configuration(),
        device: DeviceRef? = nil, logger: Logger = Logger(label: "openjam.sync")
    ) {
        self.device = device
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
        await take(envelope)
        await catchUp()
    }

    /// Applies one realtime envelope to the schedule, without waiting for the player to
    /// follow; `catchUp()` brings it there. Hand them in in order. A caller that takes
    /// envelopes while an earlier `catchUp()` still loads a track holds up no later event:
    /// the load's end goes straight on to the latest item.
    public func take(_ envelope: ServerEnvelope) async {
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
        case .deviceDelay(let delay):
            // The correction loop moves the player to the new schedule smoothly.
            if delay.device == device { status.deviceDelayMs = delay.delayMs }
            changed = false
        case .resync(let request):
            changed = await resync(request)
        case .calibration(let plan):
            _ = await playProbes(plan)
            changed = false
        case .pong(let pong):
            // Better: record pongs straight from the socket with the receive instant.
            await clockSync.record(pong, receivedAt: clock.now())
            changed = false
        case .memberJoined, .memberLeft, .memberUpdated, .queueUpdate, .queueItemAdded, .queueItemRemoved, .votesUpdate,
            .skipRequests, .sessionUpdated, .ack, .error, .syncStatus, .calibrationResult, .myChoices:
            // People, the queue, settings, votes and replies leave the playing item's schedule alone; a
            // new item or delay reaches this engine as its own playPrepare, stopped or deviceDelay.
            changed = false
        }
        if changed {
            generation &+= 1
            status.epoch = timeline?.epoch
            status.itemId = timeline?.itemId
            scheduleChanged?.yield()
        }
    }

    /// The session's socket is new (`Participant` calls it at each connection). The server
    /// counts a device ready only while its member stays connected, and a ready sent while the
    /// socket was down is lost: a ready already said for the preparing item is said again.
    /// Said before the new socket's first event is applied, it may name an item the server has
    /// moved on from meanwhile: the server ignores a ready for any but the item it prepares.
    public func reconnected() async {
        guard let timeline, timeline.state == .preparing, readySentEpoch == timeline.epoch else { return }
        await send(.ready(Ready(epoch: timeline.epoch)))
    }

    /// Brings the player to the schedule as it is now (a load included), and has the next
    /// song load beside the current one.
    public func catchUp() async {
        // The next song loads while this one plays, so the hand-over at its end waits for nothing.
        if let next = upNext, preloadedItemId != next.itemId {
            preloadedItemId = next.itemId
            await player.preload(next.track)
        }
        await drive()
    }

    /// A run that feeds this engine begins (`Participant.run`); its number is for `stop(run:)`.
    public func begin() -> Int {
        runsBegun += 1
        return runsBegun
    }

    /// Silences the player: paused, at normal speed, no longer corrected. `Participant` calls it
    /// when its run ends (the member left or was removed, the session is gone, or the run was
    /// cancelled), so a device that is no longer in the session does not play on uncorrected.
    /// The schedule stays: the next `catchUp()` (a later run's start, or its next event) brings
    /// the player back to it. With `run`, nothing happens once a later run has begun.
    public func stop(run: Int? = nil) async {
        if let run, run != runsBegun { return }
        // Driven again from scratch by the next catch-up, as after any change.
        generation &+= 1
        followed = nil
        scheduledStartLocal = nil
        await silencePlayer()
        status.phase = .stopped
    }

    func apply(_ view: SessionView) -> Bool {
        loadRetry = nil // a snapshot (e.g. after a reconnect) retries a failed load at once
        if let device { status.deviceDelayMs = view.deviceDelays?.first { $0.device == device }?.delayMs ?? 0 }
        timeline = view.nowPlaying.map(PlaybackTimeline.init)
        upNext = view.upNext.map(PlaybackTimeline.init)
        if let nowPlaying = view.nowPlaying { epoch = nowPlaying.epoch }
        startWhilePreparing = true
        return true
    }

    func apply(_ prepare: PlayPrepare) -> Bool {
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
    func announcesUpNext(_ prepare: PlayPrepare) -> Bool {
        guard prepare.previous == nil, let current = timeline, current.state == .playing,
            prepare.epoch == current.epoch + 1, let end = current.endsAtServer
        else { return false }
        return Double(prepare.startAt) >= end - configuration.upNextToleranceMs
    }

    func apply(_ commit: PlayCommit) -> Bool {
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

    func applyChange(
        _ change: TimelineChange, kind: String, _ transform: (PlaybackTimeline) -> PlaybackTimeline
    ) -> Bool {
        guard change.epoch == epoch, let current = timeline else { return drop(kind, epoch: change.epoch) }
        timeline = transform(current)
        return true
    }

    func apply(_ stopped: PlaybackStopped) -> Bool {
        if stopped.epoch < epoch { return drop("stopped", epoch: stopped.epoch) }
        epoch = stopped.epoch
        timeline = nil
        upNext = nil
        return true
    }

    func drop(_ kind: String, epoch dropped: Int64) -> Bool {
        status.droppedEvents += 1
        logger.debug(
            "dropping a stale timeline event",
            metadata: ["sync.event": "\(kind)", "sync.eventEpoch": "\(dropped)", "sync.epoch": "\(epoch)"])
        return false
    }
}
