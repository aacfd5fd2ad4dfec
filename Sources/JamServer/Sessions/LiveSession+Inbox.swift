import Foundation
import JamCore
import JamProtocol
import NIOCore

/// Several nodes, on the owner: the commands other nodes forwarded, applied once each.
extension LiveSession {
    /// Applies the commands waiting in the inbox, in order; false when the inbox could not be
    /// read (the lease poll reads it again later). A call while a drain runs has that drain
    /// read the inbox once more; with `waitingForRunning` it returns when that drain is done
    /// (a takeover that went on before then could apply its sockets' next commands ahead of
    /// what the inbox holds), else at once, so the lease poll and the listener move on.
    @discardableResult
    func drainInbox(waitingForRunning: Bool = false) async -> Bool {
        guard role == .owner, let cluster = environment.cluster else { return true }
        if drainingInbox {
            inboxAgain = true
            guard waitingForRunning else { return true }
            return await withCheckedContinuation { inboxDrainWaiters.append($0) }
        }
        drainingInbox = true
        let read = await readInboxUntilSettled(cluster)
        drainingInbox = false
        let waiters = inboxDrainWaiters
        inboxDrainWaiters = []
        for waiter in waiters { waiter.resume(returning: read) }
        return read
    }

    private func readInboxUntilSettled(_ cluster: ClusterNode) async -> Bool {
        repeat {
            inboxAgain = false
            let commands: [ForwardedCommand]
            do {
                let id = id
                commands = try await cluster.withDatabase { try await cluster.inbox(id) }
            } catch {
                // Nothing announces these rows again: the lease poll reads them (`retryFailedReads`).
                logger.warning("reading forwarded commands failed", metadata: ["error": .loggable(error)])
                inboxReadFailed = true
                return false
            }
            inboxReadFailed = false
            takeInbox(commands)
        } while inboxAgain && role == .owner && !releasedFlag.load(ordering: .relaxed)
        return true
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
        var reused = false
        if let key {
            // A REST call's key may find its request's other form; a socket's id only itself.
            switch forwarded.connection == nil ? answers.lookup(key) : answers.lookup(key, sentWith: RequestFingerprint.forSocket(forwarded.command)) {
            case .answered(let answer):
                // A repeat: answered once its row is gone too, as the first may still be
                // waiting for its own row's deletion.
                consume(forwarded, answering: (key, answer), error: nil, local: local, node: node)
                return
            case .keyUsedForAnotherRequest: reused = true
            case .none: break
            }
        }
        let before = nextLsn
        do throws(JamError) {
            if reused { throw forwarded.connection == nil ? Self.keyReused : Self.idReused }
            try take(
                .command(forwarded.command, by: user), cause: .command(forwarded.command, by: user, connection: local, relay: nil),
                reply: forwarded.replyId.map { TurnReply(connection: local, user: user, id: $0, toRestCall: forwarded.connection == nil) },
                consumes: forwarded.inboxId)
            if local != nil, let key { forwards[key] = nil }
            guard nextLsn == before else { return }
            // Nothing changed, so no record carries the answer.
            let answer = key.flatMap { answers[$0] }
            consume(forwarded, answering: local == nil ? key.flatMap { key in answer.map { (key, $0) } } : nil, error: nil, local: nil, node: node)
        } catch {
            if Self.isDeparture(forwarded), error.code == .unavailable {
                // Refused while the store fails, and nobody would send it again: kept, with its
                // row (and no answer that would refuse a resend of it), and tried again each
                // second. A disconnect commutes with the connects around it, so applying it
                // later counts the same.
                forwardsWaiting.append((forwarded, environment.clock.now()))
                scheduleDepartureRetry()
                return
            }
            let frame = WebSocketText.frame(wire.error(error, id: forwarded.replyId, state: state, now: environment.clock.now()))
            if let key, Self.remembersRefusal(error.code, answerKey: key) {
                answers.remember(frame, for: key, lane: AnswerCache.Lane(of: forwarded.command), command: RequestFingerprint.forSocket(forwarded.command))
            }
            consume(forwarded, answering: key.map { ($0, frame) }, error: error, local: local, node: node)
        }
    }

    /// Deletes `forwarded`'s inbox row, and sends `answer` (if any) once the deletion is
    /// stored. Answered earlier, an owner that stopped in between would leave the row for the
    /// next owner, who would apply the command again, on a session that may have changed
    /// since: a member told their change was refused could see it applied after all.
    private func consume(
        _ forwarded: ForwardedCommand, answering answer: (key: String, frame: ByteBuffer)?, error: JamError?, local: ConnectionID?, node: ClusterNode
    ) {
        let deletion: [StoreWrite] = [.consumed(id, inboxId: forwarded.inboxId)]
        guard let answer else { return environment.pipeline.submit(deletion, receipt: nil) }
        // Told only once the deletion is stored (a fenced session's receipts are dropped with
        // its writes): the answer is final then, also if the session was let go meanwhile.
        let receiver = AnswerOnceStored(eventLoop: eventLoop, sessionID: id) { [self] in
            assumeIsolated { $0.answerForward(forwarded, key: answer.key, frame: answer.frame, error: error, local: local, node: node) }
        }
        environment.pipeline.submit(deletion, receipt: (receiver, 0))
    }

    private func answerForward(_ forwarded: ForwardedCommand, key: String, frame: ByteBuffer, error: JamError?, local: ConnectionID?, node: ClusterNode) {
        if forwarded.origin == node.nodeID {
            forwards[key] = nil
            if let local { replyWithoutRecord(frame, to: local, showingChoicesOf: forwarded.command.changesOwnChoices ? forwarded.user : nil) }
            return
        }
        node.reply(
            ForwardReply(
                node: forwarded.origin, session: id, key: key, connection: forwarded.connection,
                frame: String(buffer: WebSocketText.payload(of: frame)),
                command: forwarded.connection.map { _ in RequestFingerprint.forSocket(forwarded.command) }, errorCode: error?.code,
                errorMessage: error?.message))
    }
}

/// Sends a forwarded command's answer once the batch deleting its inbox row is stored.
final class AnswerOnceStored: CommitReceiver {
    let eventLoop: any EventLoop
    let sessionID: SessionID?
    private let send: @Sendable () -> Void

    init(eventLoop: any EventLoop, sessionID: SessionID, send: @escaping @Sendable () -> Void) {
        self.eventLoop = eventLoop
        self.sessionID = sessionID
        self.send = send
    }

    func stored(through lsn: Int64) { send() }
}
