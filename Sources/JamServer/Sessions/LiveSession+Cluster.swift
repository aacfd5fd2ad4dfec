import Foundation
import JamCore
import JamProtocol
import NIOCore

/// Whether this node applies a session's commands.
enum SessionRole: Sendable, Equatable {
    /// It holds the session's lease: it applies commands, logs them and runs the timers.
    case owner
    /// Another node does: this one follows the log and forwards its members' commands.
    case replica
}

/// A forwarded command's caller, waiting for the owner's answer.
enum PendingForward {
    /// A socket's command with an id: the answer goes to the socket.
    case socket(ConnectionID)
    /// A REST call: resumed with the outcome once this node has applied the record.
    case rest(CheckedContinuation<Result<Outcome, JamError>, Never>)
}

/// Several nodes on one database: a replica follows the owner's log and forwards commands; the
/// owner applies forwarded commands from the inbox; a replica takes over when the owner's
/// lease is free.
extension LiveSession {
    // MARK: Replica: forwarding

    /// Sends a command from one of this node's sockets to the owner.
    func forwardFromSocket(_ command: Command, by user: UserID, connection: ConnectionID?, replyId: String?) {
        guard let cluster = environment.cluster else { return }
        if let replyId, let connection { forwards[Self.answerKey(user, replyId)] = .socket(connection) }
        let forwarded = ForwardedCommand(
            inboxId: 0, session: id, origin: cluster.nodeID, connection: connection, replyId: replyId, command: command, user: user)
        cluster.forward(forwarded) { error in
            self.dispatch { $0.forwardFailed(key: replyId.map { Self.answerKey(user, $0) }, replyId: replyId, error) }
        }
    }

    /// A REST call on a replica: forwarded, and answered once the record that applied it is here.
    func forwardAndWait(_ command: Command, by user: UserID) async throws(JamError) -> Outcome {
        guard let cluster = environment.cluster else { throw JamError(.internal, "a replica without a cluster") }
        let replyId = "rest-\(environment.ids.next().rawValue)"
        let key = Self.answerKey(user, replyId)
        let forwarded = ForwardedCommand(inboxId: 0, session: id, origin: cluster.nodeID, connection: nil, replyId: replyId, command: command, user: user)
        // Answered by the owner's record or reply; a node that died before answering is
        // given up on, and the caller can try again.
        let timeout = eventLoop.scheduleTask(in: .seconds(10)) { [self] in
            self.assumeIsolated { $0.forwardFailed(key: key, replyId: replyId, JamError(.unavailable, "the session's server did not answer in time; try again")) }
        }
        defer { timeout.cancel() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Outcome, JamError>, Never>) in
            forwards[key] = .rest(continuation)
            cluster.forward(forwarded) { error in
                self.dispatch { $0.forwardFailed(key: key, replyId: replyId, error) }
            }
        }
        return try result.get()
    }

    /// A forward could not be stored, or went unanswered.
    func forwardFailed(key: String?, replyId: String?, _ error: JamError) {
        guard let key, let pending = forwards.removeValue(forKey: key) else { return }
        switch pending {
        case .socket(let connection):
            reply(to: connection, wire.error(error, id: replyId, state: state, now: environment.clock.now()))
        case .rest(let continuation):
            continuation.resume(returning: .failure(error))
        }
    }

    /// The owner answered a forwarded command that no record carries.
    func replied(_ reply: ForwardReply) {
        let frame = WebSocketText.frame(Array(reply.frame.utf8))
        answers.remember(frame, for: reply.key)
        guard let pending = forwards.removeValue(forKey: reply.key) else { return }
        switch pending {
        case .socket(let connection):
            replyFramed(to: connection, frame)
        case .rest(let continuation):
            if let error = reply.error {
                continuation.resume(returning: .failure(error))
            } else {
                continuation.resume(returning: .success(Self.outcome(fromAck: reply.frame)))
            }
        }
    }

    /// What a REST caller gets back of an ack (the item an add made, a vote's score).
    static func outcome(fromAck json: String) -> Outcome {
        var outcome = Outcome()
        if let envelope = try? WireCoding.decode(ServerEnvelope.self, from: Data(json.utf8)), case .ack(let ack) = envelope.event {
            outcome.itemId = ack.itemId
            outcome.score = ack.score
        }
        return outcome
    }

    // MARK: Replica: following the log

    /// Replica: the last record applied; nil for an owner or a session let go.
    var followedLsn: Int64? {
        role == .replica && !releasedFlag.load(ordering: .relaxed) ? nextLsn - 1 : nil
    }

    /// Records read for this session with others': applied, then anything still missing up
    /// to `lsn` read on its own.
    func follow(_ records: [LogRecord], upTo lsn: Int64) async {
        guard role == .replica else { return }
        if let first = records.first, first.lsn <= nextLsn { follow(records) }
        if nextLsn - 1 < lsn { await catchUp(to: lsn) }
    }

    /// A notification says the log reaches `lsn`: reads and applies the records up to it.
    func catchUp(to lsn: Int64) async {
        wantedLsn = max(wantedLsn, lsn)
        guard role == .replica, !catchingUp else { return }
        catchingUp = true
        defer { catchingUp = false }
        while role == .replica, nextLsn - 1 < wantedLsn {
            guard await readLog() else { return }
        }
    }

    /// Reads the records after the ones applied and applies them; false when there were none
    /// (or they could not be read).
    @discardableResult
    func readLog() async -> Bool {
        guard let cluster = environment.cluster, !releasedFlag.load(ordering: .relaxed) else { return false }
        let records: [LogRecord]
        do {
            let (store, id, after) = (cluster.store, id, nextLsn - 1)
            records = try await cluster.withDatabase { try await store.records(id, after: after) }
        } catch {
            logger.warning("reading the session's log failed", metadata: ["error": "\(error)"])
            return false
        }
        guard let first = records.first else { return false }
        guard first.lsn <= nextLsn else {
            // The records this node lacks were pruned behind a snapshot: start again from the store.
            release("this server fell behind the session's log")
            return false
        }
        follow(records)
        return true
    }

    /// Applies records the owner wrote: their frames go to this node's sockets at once (they
    /// are stored), and answers to commands this node forwarded go to their callers.
    func follow(_ records: [LogRecord]) {
        let now = environment.clock.now()
        var restarted = false
        for record in records where record.lsn == nextLsn {
            var actions = SessionOutbox.Actions()
            var recordEvents: [ServerEnvelope] = []
            do {
                for input in try LogCoding.decodeInputs(record.inputs) {
                    let events = try state.apply(input).events
                    recordEvents += events
                    for var frame in wire.frames(for: events, cause: .tick, state: state, now: input.at) {
                        frame.bytes = WebSocketText.frame(frame.bytes)
                        actions.merge(outbox.enqueue(.broadcast(frame), after: record.lsn, now: now))
                    }
                    actions.merge(closes(after: input.input, lsn: record.lsn, now: now))
                    if case .restart = input.input { restarted = true }
                }
            } catch {
                logger.error("a record of the session's log does not apply here", metadata: ["record.lsn": "\(record.lsn)", "error": "\(error)"])
                release("this server could not follow the session's log")
                return
            }
            nextLsn = record.lsn + 1
            if let answer = record.answer {
                let frame = WebSocketText.frame(Array(answer.frame.utf8))
                answers.remember(frame, for: answer.key)
                switch forwards.removeValue(forKey: answer.key) {
                case .socket(let connection)?:
                    actions.merge(outbox.enqueue(.direct(connection, frame), after: record.lsn, now: now))
                case .rest(let continuation)?:
                    var outcome = Self.outcome(fromAck: answer.frame)
                    outcome.events = recordEvents
                    continuation.resume(returning: .success(outcome))
                case nil:
                    break
                }
            }
            actions.merge(outbox.stored(through: record.lsn, now: now))
            execute(actions)
        }
        if restarted {
            // A new owner counted nobody connected: this node's sockets say they still are.
            for connection in connections.values { forwardFromSocket(.connect, by: connection.user, connection: nil, replyId: nil) }
        }
    }

    // MARK: Owner: the inbox

    /// Applies the commands waiting in the inbox, in order.
    func drainInbox() async {
        guard role == .owner, let cluster = environment.cluster else { return }
        if drainingInbox {
            inboxAgain = true
            return
        }
        drainingInbox = true
        defer { drainingInbox = false }
        repeat {
            inboxAgain = false
            let commands: [ForwardedCommand]
            do {
                let id = id
                commands = try await cluster.withDatabase { try await cluster.inbox(id) }
            } catch {
                logger.warning("reading forwarded commands failed", metadata: ["error": "\(error)"])
                return
            }
            takeInbox(commands)
        } while inboxAgain && role == .owner
    }

    /// How long a taken inbox row is passed over: its deletion commits within moments (or the
    /// session is let go, and the next owner takes it afresh).
    static let takenInboxMemoryMs: Millis = 60_000

    /// Applies the inbox rows not taken yet, in order.
    ///
    /// Row ids are not commit order (two nodes' inserts commit in either order), so there is
    /// no high-water mark: every row still there is looked at, and those taken already (their
    /// deletion not committed yet, or read by an earlier query) are passed over.
    func takeInbox(_ commands: [ForwardedCommand]) {
        guard role == .owner, let cluster = environment.cluster, !releasedFlag.load(ordering: .relaxed) else { return }
        let now = environment.clock.now()
        takenInbox = takenInbox.filter { now - $0.value < Self.takenInboxMemoryMs }
        for command in commands where takenInbox[command.inboxId] == nil && role == .owner && !releasedFlag.load(ordering: .relaxed) {
            takenInbox[command.inboxId] = now
            takeForwarded(command, node: cluster)
        }
    }

    /// Applies one forwarded command; its inbox row goes with its record (or on its own when
    /// it changed nothing or was refused), and its origin is answered.
    func takeForwarded(_ forwarded: ForwardedCommand, node: ClusterNode) {
        let user = forwarded.user
        let key = forwarded.replyId.map { Self.answerKey(user, $0) }
        let local = forwarded.origin == node.nodeID ? forwarded.connection : nil
        if let key, let answer = answers[key] {
            environment.pipeline.submit([.consumed(id, inboxId: forwarded.inboxId)], receipt: nil)
            answerForward(forwarded, key: key, frame: answer, error: nil, local: local, node: node)
            return
        }
        let before = nextLsn
        do {
            try take(
                .command(forwarded.command, by: user), cause: .command(forwarded.command, by: user, connection: local, relay: nil),
                reply: forwarded.replyId.map { (local ?? -1, user, $0) }, consumes: forwarded.inboxId)
            if local != nil, let key { forwards[key] = nil }
            guard nextLsn == before else { return }
            // Nothing changed, so no record carries the answer.
            environment.pipeline.submit([.consumed(id, inboxId: forwarded.inboxId)], receipt: nil)
            if let key, let answer = answers[key], local == nil { answerForward(forwarded, key: key, frame: answer, error: nil, local: nil, node: node) }
        } catch {
            environment.pipeline.submit([.consumed(id, inboxId: forwarded.inboxId)], receipt: nil)
            let frame = WebSocketText.frame(wire.error(error, id: forwarded.replyId, state: state, now: environment.clock.now()))
            if let key {
                answers.remember(frame, for: key)
                answerForward(forwarded, key: key, frame: frame, error: error, local: local, node: node)
            }
        }
    }

    private func answerForward(_ forwarded: ForwardedCommand, key: String, frame: ByteBuffer, error: JamError?, local: ConnectionID?, node: ClusterNode) {
        if forwarded.origin == node.nodeID {
            forwards[key] = nil
            if let local { replyFramed(to: local, frame) }
            return
        }
        node.reply(
            ForwardReply(
                node: forwarded.origin, session: id, key: key, connection: forwarded.connection,
                frame: String(buffer: WebSocketText.payload(of: frame)), errorCode: error?.code, errorMessage: error?.message))
    }

    /// How long a replica nobody here is connected to keeps following its session.
    static let idleReplicaLifetime: TimeAmount = .seconds(60)

    /// A replica whose last socket here closed stops following the session a while later
    /// (REST calls in between keep it), so a node does not apply every record of sessions
    /// it no longer serves.
    func scheduleReplicaRelease() {
        eventLoop.scheduleTask(in: Self.idleReplicaLifetime) { [self] in
            self.assumeIsolated { session in
                guard session.role == .replica, session.connections.isEmpty, session.forwards.isEmpty else { return }
                if session.releasedFlag.exchange(true, ordering: .acquiringAndReleasing) == false {
                    session.logger.debug("no member here any more; no longer following the session")
                }
            }
        }
    }

    // MARK: Changing hands

    /// This node took the session's lease: it reads the log to its end, becomes the owner,
    /// counts its own sockets connected again, and applies what waits in the inbox.
    func promote(entry: StoredSessionEntry?) async {
        guard role == .replica, !releasedFlag.load(ordering: .relaxed) else { return }
        while await readLog() {}
        guard !releasedFlag.load(ordering: .relaxed) else { return }
        role = .owner
        indexed = entry
        takenInbox = [:]
        // Callers waiting on this node for the old owner's answer: the commands are in the
        // inbox, and their answers now come from here.
        for (key, pending) in forwards {
            if case .rest(let continuation) = pending {
                forwards[key] = nil
                continuation.resume(returning: .failure(JamError(.unavailable, "the session moved to another server meanwhile; try again")))
            }
        }
        logger.notice("took the session over", metadata: ["record.lsn": "\(nextLsn - 1)"])
        do {
            try take(.restart(environment.timing), cause: .tick)
            for connection in connections.values {
                try take(.command(.connect, by: connection.user), cause: .command(.connect, by: connection.user, connection: nil, relay: nil))
            }
            try take(.advance, cause: .tick)
        } catch {
            logger.error("taking the session over failed", metadata: ["error": "\(error)"])
        }
        rescheduleTimer()
        await drainInbox()
    }

    /// Lets the session go from this node: its sockets close so their clients reconnect (to
    /// any node, resuming from their last `seq`), and callers waiting on it get a clear error.
    func release(_ reason: String) {
        guard !releasedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        logger.warning("letting the session go", metadata: ["reason": "\(reason)"])
        stopTimers()
        for (_, pending) in forwards {
            if case .rest(let continuation) = pending {
                continuation.resume(returning: .failure(JamError(.unavailable, "the session moved to another server; try again")))
            }
        }
        forwards.removeAll()
        var deliveries: [RealtimeConnection.Delivery] = []
        for (key, connection) in connections {
            outbox.detach(key)
            Metrics.connections.decrement()
            deliveries.append(.init(connection: connection, frames: [], close: (.normal, "the session moved to another server; reconnect")))
        }
        connections.removeAll()
        RealtimeConnection.deliver(deliveries)
    }
}
