import Foundation
import JamCore
import JamProtocol
import Logging
import Synchronization

/// Services a live session needs.
struct SessionEnvironment: Sendable {
    let clock: any ServerClock
    let ids: any IDGenerator
    let persistence: PersistenceService
    let scheduler: TimelineScheduler
    let logger: Logger
    let replayLogLimit: Int
    /// The library tracks a fallback shuffle draws from (empty: no fallback).
    var fallbackTracks: [Track] = []
}

/// One live session: owns its `SessionState`, its connections and its event log.
///
/// Every change is applied at once in memory, but its frames, acknowledgements and
/// waiting REST callers are released only when the store has the `seq` they follow
/// (see `markDurable`). The actor never waits for a client: frames go to bounded outboxes.
public actor LiveSession {
    enum Pending {
        case send(WireFrame)
        case direct(seq: Int64, connection: Int, frame: String)
        case waiter(seq: Int64, CheckedContinuation<Void, Never>)
        case close(seq: Int64, user: UserID?, code: UInt16, reason: String)
        case ended(seq: Int64)

        var seq: Int64 {
            switch self {
            case .send(let frame): frame.seq
            case .direct(let seq, _, _), .waiter(let seq, _), .close(let seq, _, _, _), .ended(let seq): seq
            }
        }
    }

    struct Attached {
        let connection: Connection
        /// Frames up to this `seq` are already covered by what the connection received.
        var syncedSeq: Int64
    }

    /// The session's ID.
    public nonisolated let id: SessionID
    var state: SessionState
    var wire: any SessionWire
    let environment: SessionEnvironment
    var logger: Logger
    var attached: [Int: Attached] = [:]
    private var pending: [Pending] = []
    private var pendingHead = 0
    private var durableSeq: Int64
    var publishedSeq: Int64
    var replayLog: [(seq: Int64, frame: String)] = []
    var replayStart = 0
    /// Created when the session first needs fallback tracks.
    var fallbackShuffle: FallbackShuffle?
    /// The library tracks the shuffle draws from.
    var fallbackTracks: [Track]
    private var snapshotRequested = false
    private var endAnnounced = false
    private var undeliverable: [(connection: Connection, overflowed: Bool)] = []
    /// Answers to recent commands by id ("user id"), so a client retrying after a
    /// reconnect gets the same answer instead of a second application.
    var recentAnswers: [String: String] = [:]
    var recentAnswerOrder: [String] = []
    static let recentAnswerLimit = 2048
    private let endedFlag = Atomic<Bool>(false)

    /// Wraps `state`; `stored` says whether the store already holds it at its `seq`.
    init(state: SessionState, stored: Bool, wire: any SessionWire, environment: SessionEnvironment) {
        self.id = state.id
        var state = state
        Self.topUpFallback(&state, &fallbackShuffle, from: environment.fallbackTracks)
        self.state = state
        self.fallbackTracks = environment.fallbackTracks
        self.wire = wire
        self.environment = environment
        self.logger = environment.logger
        self.logger[metadataKey: "session.id"] = "\(state.id)"
        self.durableSeq = stored ? state.seq : -1
        self.publishedSeq = state.seq
    }

    /// True once the session's end is stored and announced; the registry then lets it go.
    nonisolated var hasEnded: Bool { endedFlag.load(ordering: .acquiring) }

    /// The session as `user` sees it.
    func view(for user: UserID) throws(JamError) -> SessionView {
        guard state.member(user) != nil else { throw JamError(.notMember, "you are not a member of this session") }
        return state.view(for: user)
    }

    /// The current state (for profile views built at the edge).
    var snapshot: SessionState { state }

    /// Applies `command` and returns once its effects are stored and sent.
    @discardableResult
    func perform(_ command: Command, by user: UserID) async throws(JamError) -> Outcome {
        let outcome = try apply(command, by: user, connection: nil, relay: nil)
        await waitUntilStored()
        return outcome
    }

    /// Applies `command` and queues its frames; throws (changing nothing) when refused.
    @discardableResult
    func apply(_ command: Command, by user: UserID, connection: Int?, relay: String?) throws(JamError) -> Outcome {
        let outcome: Outcome
        do {
            outcome = try state.apply(command, by: user, at: environment.clock.now())
        } catch {
            Metrics.commandErrors.increment()
            throw error
        }
        Metrics.commands.increment()
        topUpFallback()
        enqueue(outcome.events, cause: .command(command, by: user, connection: connection, relay: relay))
        closeSockets(after: command, by: user)
        return outcome
    }

    /// Waits until everything applied so far is stored (and its frames are out).
    func waitUntilStored() async {
        let target = state.seq
        if target <= durableSeq && pendingHead == pending.count { return }
        requestSnapshot()
        await withCheckedContinuation { continuation in
            pending.append(.waiter(seq: target, continuation))
        }
    }

    /// Moves the timeline to now (called by the scheduler).
    func tick() {
        let events = state.advance(to: environment.clock.now())
        topUpFallback()
        enqueue(events, cause: .tick)
    }

    /// Closes the sockets a command ends, once what came before is out.
    private func closeSockets(after command: Command, by user: UserID) {
        switch command {
        case .leave:
            pending.append(.close(seq: state.seq, user: user, code: 1000, reason: "left the session"))
        case .kick(let target):
            pending.append(.close(seq: state.seq, user: target, code: 4403, reason: "removed by the host"))
        default:
            break
        }
        if state.hasEnded {
            pending.append(.close(seq: state.seq, user: nil, code: 4410, reason: "the session has ended"))
        }
        flushIfDurable()
    }

    // MARK: Frames and durability

    /// Queues a frame for one connection, in order with everything else.
    func reply(to connection: Int, _ frame: String?) {
        guard let frame else { return }
        pending.append(.direct(seq: state.seq, connection: connection, frame: frame))
        flushIfDurable()
    }

    /// Queues the full state for one connection; later frames follow it.
    func sendStateSync(to connection: Int) {
        guard let entry = attached[connection] else { return }
        attached[connection]?.syncedSeq = state.seq
        reply(to: connection, wire.stateSync(state, for: entry.connection.userId, now: environment.clock.now()))
    }

    func enqueue(_ events: [ServerEnvelope], cause: WireCause) {
        defer { environment.scheduler.schedule(self, at: state.nextDeadline()) }
        guard !events.isEmpty else { return }
        for frame in wire.frames(for: events, cause: cause, state: state, now: environment.clock.now()) {
            pending.append(.send(frame))
        }
        Metrics.broadcasts.increment(by: events.count)
        if state.hasEnded && !endAnnounced {
            endAnnounced = true
            pending.append(.ended(seq: state.seq))
        }
        requestSnapshot()
    }

    private func requestSnapshot() {
        guard state.seq > durableSeq, !snapshotRequested else { return }
        snapshotRequested = true
        environment.persistence.markDirty(self)
    }

    /// The row to store now (called by the persistence service).
    func snapshotForStore() -> StoredSession {
        snapshotRequested = false
        let bytes: [UInt8]
        do {
            bytes = Array(try JSONEncoder().encode(state))
        } catch {
            preconditionFailure("session state failed to encode: \(error)")
        }
        return StoredSession(id: id, joinCode: state.joinCode, seq: state.seq, ended: state.hasEnded, state: bytes)
    }

    /// The store holds the state up to `seq`: release what waited for it.
    func markDurable(_ seq: Int64) {
        durableSeq = max(durableSeq, seq)
        flushIfDurable()
        if state.seq > durableSeq { requestSnapshot() }
    }

    func flushIfDurable() {
        while pendingHead < pending.count, pending[pendingHead].seq <= durableSeq {
            let item = pending[pendingHead]
            pendingHead += 1
            switch item {
            case .send(let frame):
                if frame.logged {
                    publishedSeq = frame.seq
                    replayLog.append((frame.seq, frame.frame))
                }
                for (key, entry) in attached where entry.syncedSeq < frame.seq && matches(frame.audience, entry.connection) {
                    if deliver(frame.frame, to: key) { Metrics.deliveries.increment() }
                }
            case .direct(_, let connection, let frame):
                deliver(frame, to: connection)
            case .waiter(_, let continuation):
                continuation.resume()
            case .close(_, let user, let code, let reason):
                for (key, entry) in attached where user == nil || entry.connection.userId == user {
                    entry.connection.close(code: code, reason: reason)
                    attached[key] = nil
                    Metrics.connections.decrement()
                }
            case .ended:
                environment.scheduler.schedule(self, at: nil)
                endedFlag.store(true, ordering: .releasing)
            }
        }
        compactQueues()
        settleUndeliverable()
    }

    private func matches(_ audience: Audience, _ connection: Connection) -> Bool {
        switch audience {
        case .everyone: true
        case .everyoneExcept(let excluded): connection.id != excluded
        case .user(let user): connection.userId == user
        }
    }

    /// Hands a frame to an attached connection's outbox. A full outbox means a stalled
    /// reader, a finished one a socket on its way out: either way the connection is
    /// detached now and settled once the current flush is done.
    @discardableResult
    func deliver(_ frame: String, to key: Int) -> Bool {
        guard let entry = attached[key] else { return false }
        switch entry.connection.send(frame) {
        case .queued:
            return true
        case .overflowed:
            attached[key] = nil
            undeliverable.append((entry.connection, true))
        case .closed:
            attached[key] = nil
            undeliverable.append((entry.connection, false))
        }
        return false
    }

    /// Closes stalled readers with 4429 and lets every detached connection go.
    func settleUndeliverable() {
        while !undeliverable.isEmpty {
            let (connection, overflowed) = undeliverable.removeFirst()
            if overflowed {
                logger.warning("closing a connection that stopped reading", metadata: ["member.id": "\(connection.userId)", "connection.id": "\(connection.id)"])
                Metrics.slowConsumers.increment()
                connection.close(code: 4429, reason: "too slow: the connection fell behind")
            }
            Metrics.connections.decrement()
            socketGone(connection)
        }
    }

    private func compactQueues() {
        if pendingHead > 256 && pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            pendingHead = 0
        }
        let limit = environment.replayLogLimit
        if replayLog.count - replayStart > limit {
            replayStart = replayLog.count - limit
        }
        if replayStart > limit {
            replayLog.removeFirst(replayStart)
            replayStart = 0
        }
    }
}
