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
}

/// One live session: owns its `SessionState`, its connections and its event log.
///
/// Every change is applied at once in memory, but its events, acknowledgements and
/// waiting REST callers are released only when the store has the `seq` they follow
/// (see `markDurable`). The actor never waits for a client: frames go to bounded outboxes.
public actor LiveSession {
    private enum Pending {
        case broadcast(seq: Int64, frame: String, event: ServerEventType)
        case direct(seq: Int64, connection: Int, frame: String)
        case waiter(seq: Int64, CheckedContinuation<Void, Never>)
        case close(seq: Int64, user: UserID?, code: UInt16, reason: String)

        var seq: Int64 {
            switch self {
            case .broadcast(let seq, _, _), .direct(let seq, _, _), .waiter(let seq, _), .close(let seq, _, _, _): seq
            }
        }
    }

    private struct Attached {
        let connection: Connection
        /// Broadcasts up to this `seq` are already covered by what the connection received.
        var syncedSeq: Int64
    }

    /// The session's ID.
    public nonisolated let id: SessionID
    private(set) var state: SessionState
    private let environment: SessionEnvironment
    private var logger: Logger
    private var attached: [Int: Attached] = [:]
    private var pending: [Pending] = []
    private var pendingHead = 0
    private var durableSeq: Int64
    private var publishedSeq: Int64
    private var replayLog: [(seq: Int64, frame: String)] = []
    private var replayStart = 0
    private var snapshotRequested = false
    private var undeliverable: [(connection: Connection, overflowed: Bool)] = []
    private let endedFlag = Atomic<Bool>(false)

    /// Wraps `state`; `stored` says whether the store already holds it at its `seq`.
    init(state: SessionState, stored: Bool, environment: SessionEnvironment) {
        self.id = state.id
        self.state = state
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

    /// The join code.
    var joinCode: String { state.joinCode }

    /// Applies `command` and returns once its effects are stored and broadcast.
    @discardableResult
    func perform(_ command: Command, by user: UserID) async throws(JamError) -> Outcome {
        let now = environment.clock.now()
        let outcome: Outcome
        do {
            outcome = try state.apply(command, by: user, at: now)
        } catch {
            Metrics.commandErrors.increment()
            throw error
        }
        Metrics.commands.increment()
        enqueue(outcome.events)
        afterCommand(command, by: user)
        await waitUntilStored()
        return outcome
    }

    /// Waits until everything applied so far is stored (and its events are out).
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
        enqueue(events)
    }

    // MARK: Realtime connections

    /// Attaches a socket: the member counts as connected and receives either the
    /// missed events after `lastSeq` or a `stateSync`.
    func attach(_ connection: Connection, lastSeq: Int64?) throws(JamError) {
        let user = connection.userId
        let outcome = try state.apply(.connect, by: user, at: environment.clock.now())
        Metrics.connections.increment()
        attached[connection.id] = Attached(connection: connection, syncedSeq: state.seq)
        enqueue(outcome.events)
        if let lastSeq, replay(to: connection.id, after: lastSeq) {
            return
        }
        sendStateSync(to: connection.id)
    }

    /// Detaches a socket that closed.
    func detach(_ connection: Connection) {
        guard attached.removeValue(forKey: connection.id) != nil else { return }
        Metrics.connections.decrement()
        guard !state.hasEnded, state.member(connection.userId) != nil else { return }
        do {
            let outcome = try state.apply(.disconnect, by: connection.userId, at: environment.clock.now())
            enqueue(outcome.events)
        } catch {
            logger.debug("disconnect not applied", metadata: ["error": "\(error)"])
        }
    }

    /// Handles one decoded frame from `connection`; replies go to its outbox.
    func handle(_ frame: ClientFrame, from connection: Connection, receivedAt: Double) {
        guard attached[connection.id] != nil else { return }
        let user = connection.userId
        let command: Command
        switch frame.command {
        case .hello(let hello):
            if let lastSeq = hello.lastSeq, replay(to: connection.id, after: lastSeq) {
                // Replayed.
            } else {
                sendStateSync(to: connection.id)
            }
            if let id = frame.id { reply(to: connection.id, .ack(Ack(id: id))) }
            return
        case .ping(let ping):
            let pong = Pong(clientSendTime: ping.clientSendTime, serverReceiveTime: receivedAt, serverSendTime: environment.clock.nowPrecise())
            deliver(envelope(.pong(pong)), to: connection.id)
            settleUndeliverable()
            return
        case .addToQueue(let add): command = .add(track: add.track, nonce: add.nonce, itemId: environment.ids.next())
        case .removeFromQueue(let ref): command = .remove(itemId: ref.itemId)
        case .vote(let vote): command = .vote(itemId: vote.itemId, value: vote.value)
        case .skip: command = .skip
        case .requestSkip: command = .requestSkip
        case .play: command = .play
        case .pause: command = .pause
        case .resume: command = .resume
        case .seek(let seek): command = .seek(positionMs: seek.positionMs)
        case .ready(let ready): command = .ready(epoch: ready.epoch)
        case .syncReport(let report): command = .syncReport(report)
        case .updateSettings(let patch): command = .updateSettings(patch)
        case .promote(let promote): command = .setRole(userId: promote.userId, role: promote.role ?? .cohost)
        case .kick(let ref): command = .kick(userId: ref.userId)
        case .leave: command = .leave
        }
        do {
            let outcome = try state.apply(command, by: user, at: environment.clock.now())
            Metrics.commands.increment()
            enqueue(outcome.events)
            if let id = frame.id {
                reply(to: connection.id, .ack(Ack(id: id, itemId: outcome.itemId, score: outcome.score)))
            }
            afterCommand(command, by: user)
        } catch {
            Metrics.commandErrors.increment()
            reply(to: connection.id, .error(ErrorEvent(id: frame.id, code: error.code, message: error.message)))
        }
    }

    /// Answers a frame that could not be decoded.
    func reject(_ error: JamError, id: String?, to connection: Connection) {
        Metrics.commandErrors.increment()
        reply(to: connection.id, .error(ErrorEvent(id: id, code: error.code, message: error.message)))
    }

    /// Closes every socket of `user` once what came before is out.
    private func afterCommand(_ command: Command, by user: UserID) {
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
        requestSnapshot()
    }

    // MARK: Events and durability

    private func envelope(_ event: ServerEvent) -> String {
        ServerEnvelope(event: event, epoch: state.epoch, seq: state.seq, timestamp: environment.clock.now()).jsonString()
    }

    private func reply(to connection: Int, _ event: ServerEvent) {
        pending.append(.direct(seq: state.seq, connection: connection, frame: envelope(event)))
        flushIfDurable()
    }

    private func sendStateSync(to connection: Int) {
        guard let entry = attached[connection] else { return }
        attached[connection]?.syncedSeq = state.seq
        let frame = envelope(.stateSync(state.view(for: entry.connection.userId)))
        pending.append(.direct(seq: state.seq, connection: connection, frame: frame))
        flushIfDurable()
    }

    /// Sends the logged events after `lastSeq`; false when the log no longer holds them.
    private func replay(to connection: Int, after lastSeq: Int64) -> Bool {
        guard attached[connection] != nil, lastSeq <= publishedSeq else { return false }
        let firstLogged = replayStart < replayLog.count ? replayLog[replayStart].seq : publishedSeq + 1
        guard lastSeq >= firstLogged - 1 else { return false }
        for index in replayStart..<replayLog.count where replayLog[index].seq > lastSeq {
            guard deliver(replayLog[index].frame, to: connection) else { break }
        }
        attached[connection]?.syncedSeq = max(lastSeq, publishedSeq)
        settleUndeliverable()
        return true
    }

    private func enqueue(_ events: [ServerEnvelope]) {
        guard !events.isEmpty else {
            environment.scheduler.schedule(self, at: state.nextDeadline())
            return
        }
        for event in events {
            pending.append(.broadcast(seq: event.seq, frame: event.jsonString(), event: event.event.type))
        }
        Metrics.broadcasts.increment(by: events.count)
        requestSnapshot()
        environment.scheduler.schedule(self, at: state.nextDeadline())
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

    private func flushIfDurable() {
        var ended = false
        while pendingHead < pending.count, pending[pendingHead].seq <= durableSeq {
            let item = pending[pendingHead]
            pendingHead += 1
            switch item {
            case .broadcast(let seq, let frame, let type):
                publishedSeq = seq
                replayLog.append((seq, frame))
                for (key, entry) in attached where entry.syncedSeq < seq {
                    if deliver(frame, to: key) { Metrics.deliveries.increment() }
                }
                if type == .sessionEnded { ended = true }
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
            }
        }
        compactQueues()
        settleUndeliverable()
        if ended {
            environment.scheduler.schedule(self, at: nil)
            endedFlag.store(true, ordering: .releasing)
        }
    }

    /// Hands a frame to an attached connection's outbox. A full outbox means a stalled
    /// reader, a finished one a socket on its way out: either way the connection is
    /// detached now and settled once the current flush is done.
    @discardableResult
    private func deliver(_ frame: String, to key: Int) -> Bool {
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

    /// Closes stalled readers with 4429 and counts every detached connection as gone.
    private func settleUndeliverable() {
        while !undeliverable.isEmpty {
            let (connection, overflowed) = undeliverable.removeFirst()
            if overflowed {
                logger.warning("closing a connection that stopped reading", metadata: ["member.id": "\(connection.userId)", "connection.id": "\(connection.id)"])
                Metrics.slowConsumers.increment()
                connection.close(code: 4429, reason: "too slow: the connection fell behind")
            }
            Metrics.connections.decrement()
            guard !state.hasEnded, state.member(connection.userId) != nil else { continue }
            do {
                enqueue(try state.apply(.disconnect, by: connection.userId, at: environment.clock.now()).events)
            } catch {
                logger.debug("disconnect not applied", metadata: ["error": "\(error)"])
            }
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
