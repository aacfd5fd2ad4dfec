import Foundation
import JamCore
import JamProtocol
import Logging
import NIOCore
import Synchronization

/// One live session, run on one event loop: it owns its state, its sockets and its place in
/// the log.
///
/// Every change is a turn: the input is applied in memory, logged as one record, and its
/// frames, acknowledgement and waiting REST callers are released by the outbox only when the
/// store holds that record. Sockets on the session's own loop are written directly; the
/// others get one hop per loop per batch. The session never waits for a client.
public actor LiveSession: CommitReceiver {
    /// The session's ID.
    public nonisolated let id: SessionID
    /// The loop the session runs on: its executor.
    nonisolated let eventLoop: any EventLoop
    public nonisolated var unownedExecutor: UnownedSerialExecutor { eventLoop.executor.asUnownedSerialExecutor() }

    var state: SessionState
    var wire: any SessionWire
    let environment: SessionEnvironment
    var logger: Logger
    var outbox: SessionOutbox
    var connections: [ConnectionID: RealtimeConnection] = [:]
    var answers = AnswerCache()
    /// The number the next record gets.
    var nextLsn: Int64
    var recordsSinceSnapshot = 0
    var eventsSinceSnapshot = 0
    /// The index row as last written, to write it again only when it changes.
    var indexed: StoredSessionEntry?
    /// Callers waiting for what was applied before them to be stored (`waitUntilStored`).
    var waiters: [Int: StoreWaiter] = [:]
    var nextWaiter = 0
    var timer: (deadline: Millis, task: Scheduled<Void>)?
    var stallTimer: Scheduled<Void>?
    /// Members whose last socket closed while the store refused turns: they disconnect (or
    /// leave) once it takes turns again, tried each second (`retryDepartures`).
    var departuresWaiting: [UserID: Int] = [:]
    /// Sockets whose connect the store refused as this node took the session over (tried
    /// again with `departuresWaiting`).
    var connectsWaiting: Set<ConnectionID> = []
    /// Disconnects forwarded for another node's closed sockets that failed: on a replica,
    /// those the database did not confirm; on the owner, inbox rows its store refused.
    /// Tried again with `departuresWaiting`.
    var forwardsWaiting: [(forwarded: ForwardedCommand, since: Millis)] = []
    /// Socket commands that came while this node took the session over, in their order; nil
    /// when no takeover runs (`promote`).
    var heldDuringTakeover: [HeldSocketCommand]?
    var departureTimer: Scheduled<Void>?
    /// Created when the session first needs fallback tracks.
    var fallbackShuffle: FallbackShuffle?
    /// The library: what the shuffle draws from, and what library tracks added must be.
    var library: LibraryTracks
    private let endedFlag = Atomic<Bool>(false)
    /// When any member's socket last sent a message (`NIODeadline` nanoseconds): a profile
    /// with an idle timeout closes the session's sockets only when all of them fell silent.
    nonisolated package let lastMessageNanos = Atomic<UInt64>(NIODeadline.now().uptimeNanoseconds)
    private var endAnnounced = false
    /// Whether this node applies the session's commands or follows another node that does.
    var role: SessionRole = .owner {
        didSet { replicaFlag.store(role == .replica, ordering: .releasing) }
    }
    /// `role == .replica`, for the registry's index, which cannot wait on the session.
    private let replicaFlag = Atomic<Bool>(false)
    /// Set once the session is let go (it fell behind the log, or its lease was lost): the
    /// registry then reads it again from the store.
    let releasedFlag = Atomic<Bool>(false)
    /// Replica: commands forwarded to the owner and not answered yet, by answer key.
    var forwards: [String: PendingForward] = [:]
    /// Replica: the latest forward of each socket command's answer key whose time limit still
    /// runs, so that the limit of an earlier send of the same command does not end a retry's.
    var forwardLimits: [String: UInt64] = [:]
    var forwardCount: UInt64 = 0
    /// Replica: the log position a notification announced.
    var wantedLsn: Int64 = 0
    /// Replica: how often notifications may have been missed (`catchUpToEnd`), and how many
    /// of those times a read that began after them found the log's end.
    var logEndsWanted: UInt64 = 0
    var logEndsMet: UInt64 = 0
    var catchingUp = false
    /// Owner: inbox rows taken (whose deletion may not be committed yet), with when.
    var takenInbox: [Int64: Millis] = [:]
    var drainingInbox = false
    var inboxAgain = false
    /// Callers of `drainInbox(waitingForRunning: true)` that came while a drain ran, resumed
    /// when it ends.
    var inboxDrainWaiters: [CheckedContinuation<Bool, Never>] = []
    /// Owner: the last read of the inbox failed; the lease poll reads it again.
    var inboxReadFailed = false
    /// Every device's latest sync report (passing, never logged).
    var syncBoard = SyncBoard()
    var syncPublishTimer: Scheduled<Void>?
    /// Members' token buckets for socket messages (nil: no limits).
    var budget: CommandBudget?
    /// The room calibration under way, if any.
    var calibration: CalibrationRun?
    var calibrationTimer: Scheduled<Void>?

    /// What a new session's creation writes: its index row and its first snapshot (record 0).
    nonisolated let creationWrites: [StoreWrite]

    /// Wraps `state` whose store holds every record up to `storedLsn` (-1: nothing yet: a new
    /// session, whose first snapshot is `creationWrites`).
    init(
        state: SessionState, storedLsn: Int64, wire: any SessionWire, environment: SessionEnvironment, eventLoop: any EventLoop,
        fallbackShuffle: FallbackShuffle? = nil
    ) {
        self.id = state.id
        self.eventLoop = eventLoop
        self.state = state
        self.wire = wire
        self.environment = environment
        self.budget = environment.commandLimits.map(CommandBudget.init)
        self.library = environment.library
        self.fallbackShuffle = fallbackShuffle
        self.logger = environment.logger
        self.logger[metadataKey: "session.id"] = "\(state.id)"
        self.outbox = SessionOutbox(configuration: environment.outbox, storedLsn: storedLsn, publishedSeq: state.seq)
        if storedLsn < 0 {
            let entry = StoredSessionEntry(id: state.id, joinCode: state.joinCode, codeIssuedAt: state.createdAt, ended: false, wakeAt: nil)
            let snapshot = SessionSnapshot(lsn: 0, seq: state.seq, wakeAt: state.nextDeadline(), state: LogCoding.encode(state), answers: [])
            creationWrites = [.index(entry), .snapshot(state.id, snapshot)]
            indexed = entry
            nextLsn = 1
        } else {
            creationWrites = []
            nextLsn = storedLsn + 1
        }
    }

    /// True once the session's end is stored and announced; the registry then lets it go.
    nonisolated var hasEnded: Bool { endedFlag.load(ordering: .acquiring) }

    /// Whether another node owns the session and this one follows it.
    nonisolated var isReplica: Bool { replicaFlag.load(ordering: .acquiring) }

    /// Runs `body` on the session's loop, after whatever runs there now (never inline, so a
    /// socket handler calling in while the session writes to it cannot re-enter the session).
    nonisolated func dispatch(_ body: @escaping @Sendable (isolated LiveSession) -> Void) {
        eventLoop.execute { self.assumeIsolated { body($0) } }
    }

    /// One turn: applies `input` (and the fallback top-up it calls for), logs it as one record,
    /// and queues its frames behind that record. Throws, changing nothing, when refused.
    ///
    /// - Parameter reply: whom the turn answers, if anyone.
    /// - Returns: the outcome and the record number its frames wait for.
    @discardableResult
    func take(
        _ input: SessionInput, cause: WireCause, reply: TurnReply? = nil, consumes inboxId: Int64? = nil
    ) throws(JamError) -> (Outcome, lsn: Int64) {
        // A session this node let go takes nothing more: its records would be fenced off.
        guard !releasedFlag.load(ordering: .relaxed) else { throw Self.letGo }
        if case .command(_, let user) = input, environment.pipeline.isStalled {
            // Applied now, it could not be stored; the client hears so at once rather than wait.
            let refusal = JamError(.unavailable, "the database is not taking writes; the command was not applied, try again")
            noteRefusal(refusal, by: user, what: input.logName)
            throw refusal
        }
        let now = environment.clock.now()
        let firstSeq = state.seq
        var inputs = [TimedInput(at: now, input)]
        // Held only when needed: while it is held, the turn's first change to each of the
        // state's tables (the add nonces: up to 4,096) copies the whole table.
        let before = Self.needsComparison(input, in: state) ? state : nil
        var outcome: Outcome
        do {
            inputs[0].input = try library.resolving(input, in: state)
            outcome = try state.apply(inputs[0])
        } catch {
            if case .command(_, let user) = input { noteRefusal(error, by: user, what: input.logName) } else { Metrics.commandFailed(error) }
            throw error
        }
        if case .command = input { Metrics.commands.increment() }
        if let supply = fallbackSupply() {
            let topUp = TimedInput(at: now, .supplyFallback(supply))
            Self.applyInfallible(topUp, to: &state)
            inputs.append(topUp)
        }
        var ack: ByteBuffer?
        var answer: StoredAnswer?
        if let reply, let json = reply.answer(Ack(id: reply.id, itemId: outcome.itemId, score: outcome.score), wire: wire, state: state, now: now) {
            ack = WebSocketText.frame(json)
            answer = StoredAnswer(key: Self.answerKey(reply.user, reply.id), frame: String(buffer: json))
        }
        // Remembered before the turn is logged: a snapshot the turn writes holds its answer, as
        // the turn's record may be pruned behind a later snapshot while this one stays the base
        // a restart replays from.
        if let answer, let ack, let reply {
            // A socket's id is kept with what it asked for (as sent, before any library lookup).
            var asked: UInt64?
            if !reply.toRestCall, case .command(let command, _) = input { asked = RequestFingerprint.forSocket(command) }
            answers.remember(ack, for: answer.key, lane: AnswerCache.Lane(of: input), command: asked)
        }
        // A turn that changed nothing (a repeated `ready`, a vote for the same value) needs no record.
        let changed = !outcome.events.isEmpty || inputs.count > 1 || before.map { $0 != state } ?? true
        let lsn: Int64
        if changed {
            lsn = nextLsn
            nextLsn += 1
            log(inputs: inputs, firstSeq: firstSeq, answer: answer, lsn: lsn, consumes: inboxId)
        } else {
            lsn = nextLsn - 1
        }
        // Encoded once the record is on its way: the store's thread wakes and writes while this
        // loop encodes, and the frames wait for the record anyway.
        let frames = wire.frames(for: outcome.events, cause: cause, state: state, now: now)
        var actions = SessionOutbox.Actions()
        for var frame in frames {
            // Encoded once, WebSocket header included, for every member.
            frame.bytes = WebSocketText.frame(frame.bytes)
            actions.merge(outbox.enqueue(.broadcast(frame), after: lsn, now: now))
        }
        if let ack, let connection = reply?.connection { actions.merge(outbox.enqueue(.direct(connection, ack), after: lsn, now: now)) }
        actions.merge(closes(after: input, lsn: lsn, now: now))
        Metrics.broadcasts.increment(by: outcome.events.count)
        execute(actions)
        rescheduleTimer()
        return (outcome, lsn)
    }

    /// Inputs whose effect is only known by comparing states (they may change nothing).
    private static func needsComparison(_ input: SessionInput, in state: SessionState) -> Bool {
        switch input {
        case .command(let command, let user): state.mayEndWithoutEvents(command, by: user)
        case .advance, .restart, .keepFallback, .idleEnd: true
        case .supplyFallback: false
        }
    }

    static func applyInfallible(_ input: TimedInput, to state: inout SessionState) {
        do {
            _ = try state.apply(input)
        } catch {
            preconditionFailure("an input that cannot be refused was refused: \(error)")
        }
    }

    /// A member whose sockets a command ends.
    enum Departure: Equatable {
        /// The member left.
        case left(UserID)
        /// The host removed the member.
        case removed(UserID)
    }

    /// The members `command` (by `user`) ends the sockets of, in order, batched steps included.
    /// `.end` is not among them: every socket closes once the state says the session ended.
    static func departures(in command: Command, by user: UserID) -> [Departure] {
        switch command {
        case .leave: [.left(user)]
        case .kick(let target): [.removed(target)]
        case .all(let steps): steps.flatMap { departures(in: $0, by: user) }
        case .whileCurrent(_, let command): departures(in: command, by: user)
        case .join, .connect, .disconnect, .add, .remove, .vote, .skip, .requestSkip, .withdrawSkipRequest, .finish, .play, .pause, .resume, .seek,
            .ready, .syncReport, .updateSettings, .setRole, .setDeviceDelay, .setJoinCode, .end, .djPrepare, .djTimeline:
            []
        }
    }

    static func answerKey(_ user: UserID, _ id: String) -> String { "\(user.rawValue) \(id)" }

    /// The sockets a command ends, closed once what came before them is out.
    func closes(after input: SessionInput, lsn: Int64, now: Millis) -> SessionOutbox.Actions {
        var actions = SessionOutbox.Actions()
        if case .command(let command, let user) = input {
            let departures = Self.departures(in: command, by: user)
            for departure in departures {
                switch departure {
                case .left(let member):
                    actions.merge(outbox.enqueue(.close(.user(member), .normal, "left the session"), after: lsn, now: now))
                    syncBoard.forget(member)
                case .removed(let member):
                    actions.merge(outbox.enqueue(.close(.user(member), .forbidden, "removed by the host"), after: lsn, now: now))
                    syncBoard.forget(member)
                }
            }
            // Hosts' sync column drops the member's devices now, not at the next device's report.
            if !departures.isEmpty { schedulePublish(syncBoard.due(at: now)) }
        }
        if state.hasEnded && !endAnnounced {
            endAnnounced = true
            actions.merge(outbox.enqueue(.close(.everyone, .gone, "the session has ended"), after: lsn, now: now))
            actions.merge(outbox.enqueue(.ended, after: lsn, now: now))
        }
        return actions
    }


    // MARK: Durability

    nonisolated var sessionID: SessionID? { id }

    /// Another node wrote the session first (the pipeline calls this on `eventLoop`).
    nonisolated func fenced() {
        assumeIsolated { $0.release("another server wrote the session first") }
    }

    /// The store holds every record up to `lsn` (the pipeline calls this on `eventLoop`).
    nonisolated func stored(through lsn: Int64) {
        assumeIsolated { session in
            session.execute(session.outbox.stored(through: lsn, now: session.environment.clock.now()))
        }
    }

    /// The store refused or has not answered the session's writes up to `lsn` (the pipeline
    /// calls this on `eventLoop`): requests waiting on them are answered now (`refuseWaiters`).
    nonisolated func storeRefused(through lsn: Int64) {
        assumeIsolated { $0.refuseWaiters(through: lsn) }
    }

    /// Carries out what the outbox decided.
    func execute(_ actions: SessionOutbox.Actions) {
        // Before the shortcut: a socket that just stopped draining, or a check that evicted
        // nobody yet, returns no actions and still needs the next check.
        scheduleStallCheck()
        guard !actions.isEmpty else { return }
        var deliveries: [RealtimeConnection.Delivery] = []
        var index: [ConnectionID: Int] = [:]
        var delivered = 0
        for (connection, frames) in actions.writes {
            guard let target = connections[connection] else { continue }
            index[connection] = deliveries.count
            deliveries.append(RealtimeConnection.Delivery(connection: target, frames: frames, close: nil))
            delivered += frames.count
        }
        for close in actions.closes {
            guard let target = connections.removeValue(forKey: close.connection) else { continue }
            Metrics.connections.decrement()
            if let position = index[close.connection] {
                deliveries[position].close = (close.code, close.reason)
            } else {
                deliveries.append(RealtimeConnection.Delivery(connection: target, frames: [], close: (close.code, close.reason)))
            }
        }
        RealtimeConnection.deliver(deliveries)
        Metrics.deliveries.increment(by: delivered)
        if actions.ended {
            // Before any waiter hears: whoever it answers finds the session ended (its code free).
            endedFlag.store(true, ordering: .releasing)
        }
        for id in actions.resumed { waiters.removeValue(forKey: id)?.continuation.resume(returning: .stored) }
        for (connection, user) in actions.evicted {
            logger.warning("closed a connection that stopped reading", metadata: ["member.id": "\(user)", "connection.id": "\(connection)"])
            Metrics.slowConsumers.increment()
            socketGone(user)
        }
        if actions.ended {
            timer?.task.cancel()
            timer = nil
            if role == .owner { environment.cluster?.release(id) }
        }
    }
}
