import Foundation
import JamCore
import JamProtocol
import NIOCore

/// A forwarded command's caller, waiting for the owner's answer.
enum PendingForward {
    /// A socket's command with an id: the answer goes to the socket, and for a command that
    /// changes its sender's choices (a vote or skip request) the member's choices after it
    /// when no record carries it. The owner's answer names the command it answers; one for
    /// another command (sent under the id before this one's wait ran out) is not this one's.
    case socket(ConnectionID, Command)
    /// A REST call: resumed with the outcome once this node has applied the record.
    case rest(CheckedContinuation<Result<Outcome, JamError>, Never>)

    /// Whether this waits for a socket command other than the one `answered` names (its
    /// `RequestFingerprint.forSocket`): one sent under the id after an earlier command's wait
    /// ran out, which the owner answers on its own. An answer that names no command (from an
    /// owner of an earlier release) is taken as this one's.
    func waits(forAnotherThan answered: UInt64?) -> Bool {
        guard let answered, case .socket(_, let command) = self else { return false }
        return RequestFingerprint.forSocket(command) != answered
    }
}

/// Several nodes, on a replica: its members' commands go to the owner, and the owner's
/// answers come back to them.
extension LiveSession {
    /// Sends a command from one of this node's sockets to the owner.
    func forwardFromSocket(_ command: Command, by user: UserID, connection: ConnectionID?, replyId: String?) {
        guard let cluster = environment.cluster else { return }
        if let replyId, let connection {
            let key = Self.answerKey(user, replyId)
            // A REST call waiting under the same key keeps its place: the owner answers a key
            // once, and that call's continuation is the only way its caller hears. Taken over,
            // the call would wait for good. (A socket's command sent again takes its own
            // earlier place: the answer goes to the socket that asks last. Another command
            // under the same id was refused before it got here (`answerRetry`), unless the
            // first one's wait ran out: then each waits for the answer that names it.)
            if case .rest? = forwards[key] {
                reply(to: connection, wire.error(Self.idInProgress, id: replyId, state: state, now: environment.clock.now()))
                return
            }
            forwards[key] = .socket(connection, command)
            // Answered by the owner's record or reply. A reply can be lost (its notification
            // failed, or the owner died after storing the command), and a healthy socket has
            // no reason to reconnect and send it again: the member hears after the limit.
            forwardCount += 1
            let sent = forwardCount
            forwardLimits[key] = sent
            eventLoop.scheduleTask(in: .milliseconds(environment.forwardAnswerMs)) { [self] in
                self.assumeIsolated { session in
                    guard session.forwardLimits[key] == sent else { return }
                    session.forwardLimits[key] = nil
                    guard case .socket(connection, _)? = session.forwards[key] else { return }
                    session.forwardFailed(key: key, replyId: replyId, Self.forwardUnanswered)
                }
            }
        }
        let forwarded = ForwardedCommand(
            inboxId: 0, session: id, origin: cluster.nodeID, connection: connection, replyId: replyId, command: command, user: user)
        sendForward(forwarded, via: cluster, since: environment.clock.now())
    }

    /// Hands `forwarded` (first sent at `since`) to the node's forwarder. One a caller waits
    /// on is answered when it fails (its client may send it again). A closed socket's
    /// `disconnect` is sent again, as nobody else would, and the member would stay counted as
    /// connected: its id of its own makes that safe whether or not the database stored it, as
    /// long as the owner still keeps its answer, so only for `departureRetryMs`. Other
    /// forwards nobody waits on are dropped when they fail, as before.
    private func sendForward(_ forwarded: ForwardedCommand, via cluster: ClusterNode, since: Millis) {
        cluster.forward(forwarded) { error in
            self.dispatch { session in
                if Self.isDeparture(forwarded) {
                    // This node took the session over meanwhile: its restart counted its sockets afresh.
                    guard session.role == .replica else { return }
                    guard session.environment.clock.now() - since < Self.departureRetryMs else {
                        session.logger.warning("gave up forwarding a closed socket's disconnect", metadata: ["member.id": "\(forwarded.user)", "error": .loggable(error)])
                        return
                    }
                    session.forwardsWaiting.append((forwarded, since))
                    session.scheduleDepartureRetry()
                    return
                }
                guard let replyId = forwarded.replyId else { return }
                let key = Self.answerKey(forwarded.user, replyId)
                // Failed after its wait ran out (a failure can take `leaseCheck.limit` to show):
                // another command sent under the id since is not the one that failed.
                if session.forwards[key]?.waits(forAnotherThan: RequestFingerprint.forSocket(forwarded.command)) == true { return }
                session.forwardFailed(key: key, replyId: replyId, error)
            }
        }
    }

    /// How long a replica sends a failed disconnect again: well inside the time its owner keeps
    /// an answer for (the last 2,048 of the session), so a copy stored after all is answered
    /// from there rather than applied twice.
    static let departureRetryMs: Millis = 30_000

    /// A closed socket's disconnect forwarded by another node: nobody waits on its answer
    /// (clients never send a disconnect, so one without a socket is always this).
    static func isDeparture(_ forwarded: ForwardedCommand) -> Bool {
        guard forwarded.connection == nil, case .disconnect = forwarded.command else { return false }
        return true
    }

    /// Tries again the disconnects nobody waits on that failed: sent again by a replica, applied
    /// again when they wait in this owner's inbox. A row of a session this node no longer owns
    /// stays in the inbox for its next owner.
    func retryForwards() {
        guard let cluster = environment.cluster, !releasedFlag.load(ordering: .relaxed) else {
            forwardsWaiting = []
            return
        }
        let waiting = forwardsWaiting
        forwardsWaiting = []
        let now = environment.clock.now()
        for (forwarded, since) in waiting {
            if forwarded.inboxId == 0 {
                sendForward(forwarded, via: cluster, since: since)
            } else if role == .owner {
                // Still passed over by the inbox's own reads while it waits here.
                takenInbox[forwarded.inboxId] = now
                takeForwarded(forwarded, node: cluster)
            }
        }
    }

    /// A REST call on a replica: forwarded, and answered once the record that applied it is here.
    /// `replyId` names a call its caller may send again (an idempotency key); the owner then
    /// answers a repeat from its answers.
    func forwardAndWait(_ command: Command, by user: UserID, replyId named: String?) async throws(JamError) -> Outcome {
        // A replica let go answers no more records: the caller would wait out the limit for a
        // change that is applied all the same. Refused before anything is forwarded.
        guard !releasedFlag.load(ordering: .relaxed) else { throw Self.letGoUntouched }
        guard let cluster = environment.cluster else { throw JamError(.internal, "a replica without a cluster") }
        let replyId = named ?? "rest-\(environment.ids.next().rawValue)"
        let key = Self.answerKey(user, replyId)
        // One caller per key: the owner's answer resumes one waiter.
        guard forwards[key] == nil else { throw Self.keyInProgress }
        let forwarded = ForwardedCommand(inboxId: 0, session: id, origin: cluster.nodeID, connection: nil, replyId: replyId, command: command, user: user)
        // Answered by the owner's record or reply; a node that died (or whose database hangs)
        // before answering is given up on, though the owner may still apply the command.
        let timeout = eventLoop.scheduleTask(in: .milliseconds(environment.forwardAnswerMs)) { [self] in
            self.assumeIsolated { $0.forwardFailed(key: key, replyId: replyId, Self.forwardUnanswered) }
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

    /// What a caller hears when a request under the same answer key, named by `what`, still
    /// waits for the owner's answer.
    static func inProgress(_ what: String) -> JamError {
        JamError(.conflict, "a request with this \(what) is still waiting for its answer; send it again once that one is answered")
    }

    static let idInProgress = inProgress("id")

    static let keyInProgress = inProgress(IdempotencyKey.header)

    /// What a caller hears when the owner's answer did not come within
    /// `SessionEnvironment.forwardAnswerMs`.
    static let forwardUnanswered = JamError(
        .unavailable, "the session's server did not answer in time; the change may still be applied, read the session before repeating it")

    /// A forward could not be stored, or went unanswered.
    func forwardFailed(key: String?, replyId: String?, _ error: JamError) {
        guard let key, let pending = forwards.removeValue(forKey: key) else { return }
        switch pending {
        case .socket(let connection, _):
            reply(to: connection, wire.error(error, id: replyId, state: state, now: environment.clock.now()))
        case .rest(let continuation):
            continuation.resume(returning: .failure(error))
        }
    }

    /// The owner answered a forwarded command that no record carries.
    func replied(_ reply: ForwardReply) {
        let frame = WebSocketText.frame(Array(reply.frame.utf8))
        var pending = forwards.removeValue(forKey: reply.key)
        var waiting: UInt64?
        if case .socket(_, let command)? = pending { waiting = RequestFingerprint.forSocket(command) }
        if pending?.waits(forAnotherThan: reply.command) == true {
            // The answer to a command whose wait ran out: the one sent under the id since
            // waits for its own answer (the owner refuses it).
            forwards[reply.key] = pending
            pending = nil
        }
        if reply.errorCode.map({ Self.remembersRefusal($0, answerKey: reply.key) }) ?? true {
            // Kept with the changes, and with the fingerprint of the command it answers (an
            // owner of an earlier release names none: then that of the command this node
            // waited for). The owner's lists are the ones that count, and it answers a resend
            // this node no longer holds.
            answers.remember(frame, for: reply.key, lane: .change, command: reply.command ?? waiting)
        }
        guard let pending else { return }
        switch pending {
        case .socket(let connection, let command):
            replyWithoutRecord(frame, to: connection, showingChoicesOf: command.changesOwnChoices ? connections[connection]?.user : nil)
        case .rest(let continuation):
            if let error = reply.error {
                continuation.resume(returning: .failure(error))
            } else {
                continuation.resume(returning: .success(outcome(fromAck: reply.frame)))
            }
        }
    }

    /// What a REST caller gets back of an ack (the item an add made, a vote's score).
    func outcome(fromAck json: String) -> Outcome {
        var outcome = Outcome()
        do {
            if case .ack(let ack) = try WireCoding.decode(ServerEnvelope.self, from: Data(json.utf8)).event {
                outcome.itemId = ack.itemId
                outcome.score = ack.score
            }
        } catch {
            // The owner's own ack frame: if it ever does not read, the caller still learns the
            // command was applied, only without the item id or score.
            logger.error("an answer from the session's owner does not read", metadata: ["error": .loggable(error)])
        }
        return outcome
    }
}
