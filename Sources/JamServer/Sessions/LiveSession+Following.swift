import Foundation
import JamCore
import JamProtocol
import NIOCore

/// Several nodes, on a replica: the owner's log, read and applied, gives this node's
/// members the same events in the same order.
extension LiveSession {
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
        await readWantedLog()
    }

    /// Notifications may have been missed (the node was not listening): reads and applies the
    /// log to its end, wherever that is. Kept apart from `wantedLsn`, which a position past
    /// any record would leave wanting for good: every lease poll would read the log again.
    func catchUpToEnd() async {
        logEndsWanted += 1
        await readWantedLog()
    }

    /// Whether a read is still owed: records announced and not applied, or the log's end.
    private var behindLog: Bool { logEndsMet < logEndsWanted || nextLsn - 1 < wantedLsn }

    private func readWantedLog() async {
        guard role == .replica, !catchingUp else { return }
        catchingUp = true
        defer { catchingUp = false }
        while role == .replica, behindLog {
            // A wish made while this read runs is met only by a read that begins after it.
            let asked = logEndsWanted
            switch await readLog() {
            case .applied: continue
            case .atEnd:
                logEndsMet = max(logEndsMet, asked)
                // Short of an announced record only: the lease poll reads again.
                guard logEndsMet < logEndsWanted else { return }
            case .failed: return
            }
        }
    }

    /// Reads again what a failed read left: a replica's log still behind what a notification
    /// announced, an owner's inbox it could not read. Nothing announces either again, so
    /// without this the session's members would miss events (or wait on their forwarded
    /// commands) until some later change. Called by the lease poll; returns the session's
    /// role after it, for the poll's next step.
    func retryFailedReads() async -> SessionRole {
        guard !releasedFlag.load(ordering: .relaxed) else { return role }
        switch role {
        case .replica:
            if behindLog { await readWantedLog() }
        case .owner:
            if inboxReadFailed { await drainInbox() }
        }
        return role
    }

    /// What one read of the log came to.
    enum LogRead {
        /// Records were read and applied.
        case applied
        /// There were none after the ones applied.
        case atEnd
        /// They could not be read, or the session was let go.
        case failed
    }

    /// Reads the records after the ones applied and applies them.
    @discardableResult
    func readLog() async -> LogRead {
        guard let cluster = environment.cluster, !releasedFlag.load(ordering: .relaxed) else { return .failed }
        let records: [LogRecord]
        do {
            let (store, id, after) = (cluster.store, id, nextLsn - 1)
            records = try await cluster.withDatabase { try await store.records(id, after: after) }
        } catch {
            logger.warning("reading the session's log failed", metadata: ["error": .loggable(error)])
            return .failed
        }
        guard let first = records.first else { return .atEnd }
        guard first.lsn <= nextLsn else {
            // The records this node lacks were pruned behind a snapshot: start again from the store.
            release("this server fell behind the session's log")
            return .failed
        }
        follow(records)
        return releasedFlag.load(ordering: .relaxed) ? .failed : .applied
    }

    /// Applies records the owner wrote: their frames go to this node's sockets at once (they
    /// are stored), and answers to commands this node forwarded go to their callers.
    func follow(_ records: [LogRecord]) {
        let now = environment.clock.now()
        var restarted = false
        for record in records where record.lsn == nextLsn {
            var actions = SessionOutbox.Actions()
            var recordEvents: [ServerEnvelope] = []
            // Each input's frames, held until the record's numbering is known to match.
            var applied: [(input: SessionInput, frames: [WireFrame])] = []
            do {
                for input in try LogCoding.decodeInputs(record.inputs) {
                    let events = try state.applyLogged(input).events
                    recordEvents += events
                    applied.append((input.input, wire.frames(for: events, cause: Self.cause(of: input.input), state: state, now: input.at)))
                    if case .restart = input.input { restarted = true }
                }
            } catch {
                logger.error("a record of the session's log does not apply here", metadata: ["record.lsn": "\(record.lsn)", "error": .loggable(error)])
                release("this server could not follow the session's log")
                return
            }
            nextLsn = record.lsn + 1
            // An owner of another build (a rolling upgrade) numbered these events otherwise: its
            // numbers are the stored ones, which members elsewhere hold and this node writes on
            // from if it takes over. This node's own numbering of them goes to nobody; its
            // members get the whole state instead.
            let renumbered = Self.adoptNumbering(of: record, into: &state, logger: logger)
            if renumbered { outbox.renumbered(through: state.seq) }
            for (input, frames) in applied {
                if !renumbered {
                    for var frame in frames {
                        frame.bytes = WebSocketText.frame(frame.bytes)
                        actions.merge(outbox.enqueue(.broadcast(frame), after: record.lsn, now: now))
                    }
                }
                actions.merge(closes(after: input, lsn: record.lsn, now: now))
            }
            if let answer = record.answer {
                let frame = WebSocketText.frame(Array(answer.frame.utf8))
                let answered = AnswerCache.fingerprint(ofLogged: answer.key, answering: applied.first?.input)
                answers.remember(frame, for: answer.key, lane: applied.first.map { AnswerCache.Lane(of: $0.input) } ?? .change, command: answered)
                switch forwards.removeValue(forKey: answer.key) {
                case let pending? where pending.waits(forAnotherThan: answered):
                    // Not this record's command: the owner answers that one on its own.
                    forwards[answer.key] = pending
                case .socket(let connection, _)?:
                    actions.merge(outbox.enqueue(.direct(connection, frame), after: record.lsn, now: now))
                case .rest(let continuation)?:
                    var answered = outcome(fromAck: answer.frame)
                    answered.events = recordEvents
                    continuation.resume(returning: .success(answered))
                case nil:
                    break
                }
            }
            actions.merge(outbox.stored(through: record.lsn, now: now))
            execute(actions)
            if renumbered {
                for connection in connections.keys { sendStateSync(to: connection) }
            }
        }
        if restarted {
            // A new owner counted nobody connected: this node's sockets say they still are, and
            // a disconnect still waiting to go would take a connection it never counted.
            forwardsWaiting.removeAll { $0.forwarded.inboxId == 0 }
            for connection in connections.values { forwardFromSocket(.connect, by: connection.user, connection: nil, replyId: nil) }
        }
    }

    /// A replica whose last socket here closed stops following the session a while later
    /// (REST calls in between keep it), so a node does not apply every record of sessions
    /// it no longer serves.
    func scheduleReplicaRelease() {
        eventLoop.scheduleTask(in: .milliseconds(environment.idleReplicaMs)) { [self] in
            self.assumeIsolated { session in
                guard session.role == .replica, session.connections.isEmpty else { return }
                // Still waiting on an answer or a forward: looked at again later.
                guard session.forwards.isEmpty, session.forwardsWaiting.isEmpty else {
                    session.scheduleReplicaRelease()
                    return
                }
                if session.releasedFlag.exchange(true, ordering: .acquiringAndReleasing) == false {
                    session.logger.debug("no member here any more; no longer following the session")
                }
            }
        }
    }

    /// What produced a logged input's events, for the frames of this node's sockets.
    static func cause(of input: SessionInput) -> WireCause {
        switch input {
        case .command(let command, let user): .followed(command, by: user)
        case .advance, .supplyFallback, .keepFallback, .restart, .idleEnd: .tick
        }
    }
}
