import JamCore
import JamProtocol
import NIOCore

/// Sockets: attaching, detaching, and what their messages ask.
extension LiveSession {
    /// Attaches a socket. OpenJam: the member counts as connected and receives either the
    /// frames after `lastSeq` or the whole state. Socket-membership profiles: the user joins
    /// (when not a member yet), an older socket of theirs is replaced, and the state follows.
    func attach(_ connection: RealtimeConnection, lastSeq: Int64?) throws(JamError) {
        // A session this node let go (a replica nobody used, a lost lease) serves no socket:
        // refused, the client reconnects to the session as it is now.
        guard !releasedFlag.load(ordering: .relaxed) else { throw Self.letGoUntouched }
        let user = connection.user
        let now = environment.clock.now()
        if role == .replica {
            // The owner counts the socket; this node serves it from the log it follows.
            if wire.socketsAreMembership {
                if state.member(user)?.displayName != connection.displayName {
                    forwardFromSocket(.join(displayName: connection.displayName), by: user, connection: nil, replyId: nil)
                }
            } else {
                forwardFromSocket(.connect, by: user, connection: nil, replyId: nil)
            }
        } else if wire.socketsAreMembership {
            // A socket opened under a new name renames the member (joining again is how), as
            // PirateRadio's server reads the name from each socket's token.
            if state.member(user)?.displayName != connection.displayName {
                let command = Command.join(displayName: connection.displayName)
                try take(.command(command, by: user), cause: .command(command, by: user, connection: connection.id, relay: nil))
            }
            if let replaced = wire.replacedSocketClose {
                for (key, other) in connections where other.user == user {
                    connections[key] = nil
                    outbox.detach(key)
                    Metrics.connections.decrement()
                    RealtimeConnection.deliver([.init(connection: other, frames: [], close: (CloseCode(rawValue: replaced.code), replaced.reason))])
                }
            }
        } else {
            try take(.command(.connect, by: user), cause: .command(.connect, by: user, connection: connection.id, relay: nil))
        }
        Metrics.connections.increment()
        connections[connection.id] = connection
        outbox.attach(connection.id, user: user, syncedSeq: state.seq)
        if let lastSeq, let actions = outbox.replay(to: connection.id, after: lastSeq, now: now) {
            execute(actions)
            sendChoices(to: connection.id, of: user)
            sendSyncStatus(toNew: connection.id)
            return
        }
        greet(connection.id)
        sendSyncStatus(toNew: connection.id)
    }

    /// Refuses a socket of a non-member before it is attached on a replica, as the owner's
    /// `connect` refuses it there: the replica forwards the connect without waiting, so
    /// without this a removed member (or anybody with a token and the session's id) would be
    /// sent the whole state, join code included, and every change after it. This node's state
    /// may lag the log either way (a member who joined elsewhere a moment ago, or one removed
    /// a moment ago), so the log is read first. Where sockets are membership, opening one
    /// joins: nothing to check.
    func admitOnReplica(_ user: UserID) async throws(JamError) {
        guard role == .replica, !wire.socketsAreMembership else { return }
        _ = await readLog()
        // Let go while the log was read (its idle release ran in that await).
        guard !releasedFlag.load(ordering: .relaxed) else { throw Self.letGoUntouched }
        guard role == .replica, state.member(user) == nil else { return }
        throw state.refusal(ofNonMember: user)
    }

    /// Queues the greeting of a socket that just opened (the whole state), and what the
    /// session's other sockets hear of it, behind everything applied so far.
    private func greet(_ connection: ConnectionID) {
        guard let target = connections[connection] else { return }
        let now = environment.clock.now()
        let (greeting, others) = wire.socketOpened(by: target.user, state: state, now: now)
        outbox.resync(connection, at: state.seq)
        var actions = outbox.enqueue(.direct(connection, WebSocketText.frame(greeting)), after: nextLsn - 1, now: now)
        if let others {
            let framed = WebSocketText.frame(others)
            for other in connections.keys where other != connection {
                actions.merge(outbox.enqueue(.direct(other, framed), after: nextLsn - 1, now: now))
            }
        }
        execute(actions)
    }

    /// Queues the whole state for one connection, behind everything applied so far.
    func sendStateSync(to connection: ConnectionID) {
        guard let target = connections[connection] else { return }
        let now = environment.clock.now()
        outbox.resync(connection, at: state.seq)
        execute(outbox.enqueue(.direct(connection, WebSocketText.frame(wire.stateSync(state, for: target.user, now: now))), after: nextLsn - 1, now: now))
    }

    /// Queues the member's own votes and skip request for one socket: one that resumed (what
    /// their other devices changed meanwhile went to the sockets open then, and is not
    /// replayed), or one whose vote or skip request was answered from memory.
    func sendChoices(to connection: ConnectionID, of user: UserID) {
        reply(to: connection, wire.passing(.myChoices(state.choices(of: user)), state: state, now: environment.clock.now()))
    }

    /// Queues a message (JSON) for one connection, behind everything applied so far.
    func reply(to connection: ConnectionID, _ json: ByteBuffer?) {
        guard let json else { return }
        replyFramed(to: connection, WebSocketText.frame(json))
    }

    /// Queues an encoded frame for one connection, behind everything applied so far.
    func replyFramed(to connection: ConnectionID, _ frame: ByteBuffer) {
        execute(outbox.enqueue(.direct(connection, frame), after: nextLsn - 1, now: environment.clock.now()))
    }

    /// A socket closed.
    func detach(_ connection: ConnectionID) {
        guard let gone = connections.removeValue(forKey: connection) else { return }
        outbox.detach(connection)
        Metrics.connections.decrement()
        // A socket whose connect after a takeover is still waiting was never counted.
        if connectsWaiting.remove(connection) != nil { return }
        socketGone(gone.user)
        if role == .replica, connections.isEmpty { scheduleReplicaRelease() }
    }

    /// The socket of `connection` stopped or resumed draining.
    func writabilityChanged(_ connection: ConnectionID, writable: Bool) {
        execute(outbox.writabilityChanged(connection, writable: writable, now: environment.clock.now()))
    }

    /// Handles one decoded message from a socket.
    func receive(_ message: any DecodedMessage, from connectionID: ConnectionID, receivedAt: Double) {
        guard let connection = connections[connectionID] else { return }
        let user = connection.user
        let now = environment.clock.now()
        let request: SessionRequest
        if let rejected = message as? RejectedMessage {
            request = .refuse(rejected.error, replyId: rejected.id)
        } else {
            request = wire.request(for: message, from: user, state: state, ids: environment.ids, now: now)
        }
        // A retry after a reconnect gets its first answer, before any budget: the command was
        // paid for when it was applied. A host's calibrate or resync sent again must not chirp
        // the room, or re-sync a device, a second time.
        switch request {
        case .command(let command, let replyId?, _):
            if answerRetry(command, replyId, by: user, on: connectionID) { return }
        case .deviceSync(let request, let replyId?):
            if answerRetry(
                replyId, sentWith: RequestFingerprint.forSocket(request), what: request.logName, showingChoicesOf: nil, by: user,
                on: connectionID)
            {
                return
            }
        case .command, .deviceSync, .hello, .ping, .toHost, .reply, .refuse, .ignore:
            break
        }
        if let refusal = overBudget(request, from: user, on: connectionID, now: now) {
            noteRefusal(refusal.error, by: user, what: request.logName)
            reply(to: connectionID, wire.error(refusal.error, id: refusal.replyId, state: state, now: now))
            return
        }
        switch request {
        case .command(let command, let replyId, let relay):
            applyCommand(command, from: connectionID, user: user, replyId: replyId, relay: relay)
        case .deviceSync(let request, let replyId):
            receiveDeviceSync(request, from: connectionID, user: user, replyId: replyId)
        case .hello(let lastSeq, let replyId):
            if let lastSeq, let actions = outbox.replay(to: connectionID, after: lastSeq, now: now) {
                execute(actions)
                sendChoices(to: connectionID, of: user)
            } else {
                sendStateSync(to: connectionID)
            }
            if let replyId { reply(to: connectionID, wire.ack(Ack(id: replyId), state: state, now: now)) }
        case .ping(let clientSendTime):
            // Clock sync wants the answer at once, not behind frames waiting for the disk. A
            // socket that takes no more bytes for a moment is answered too: clients wait on each
            // ping (a connection watch probes no more while one waits), and what a peer pinging
            // without reading piles up is bounded by the ping budget until it is evicted as a
            // slow reader.
            let pong = wire.pong(clientSendTime: clientSendTime, receivedAt: receivedAt, sentAt: environment.clock.nowPrecise(), state: state, now: now)
            RealtimeConnection.deliver([.init(connection: connection, frames: [WebSocketText.frame(pong)], close: nil)])
        case .toHost(let frame):
            execute(outbox.relay(WebSocketText.frame(frame), to: state.hostId))
        case .reply(let frame):
            reply(to: connectionID, frame)
        case .refuse(let error, let replyId):
            noteRefusal(error, by: user, what: "message")
            reply(to: connectionID, wire.error(error, id: replyId, state: state, now: now))
        case .ignore:
            break
        }
    }

    /// The refusal for a message beyond its sender's budget (`CommandLimits`), if it is.
    func overBudget(_ request: SessionRequest, from user: UserID, on connectionID: ConnectionID, now: Millis) -> (error: JamError, replyId: String?)? {
        guard budget != nil else { return nil }
        let kinds: [CommandBudget.Kind]
        let replyId: String?
        switch request {
        case .command(let command, let id, _):
            (kinds, replyId) = (CommandBudget.Kind.of(command), id)
        case .deviceSync(_, let id), .hello(_, let id):
            (kinds, replyId) = ([.other], id)
        case .ping:
            (kinds, replyId) = ([.ping], nil)
        case .refuse(_, let id):
            // A message the server cannot read still costs reading, answering and logging.
            (kinds, replyId) = ([.other], id)
        case .toHost, .reply, .ignore:
            return nil
        }
        return spend(kinds, by: user, on: connectionID, now: now).map { ($0, replyId) }
    }

    /// Takes what `kinds` cost from `user`'s budget, or the refusal when it is short; nil
    /// without limits. REST commands draw from the same buckets as the member's sockets
    /// (`device` nil), so a second way in is not a second budget.
    func spend(_ kinds: [CommandBudget.Kind], by user: UserID, on device: ConnectionID?, now: Millis) -> JamError? {
        guard case .refused(let kind, let wait)? = budget?.spend(kinds, by: user, on: device, at: now) else { return nil }
        let seconds = Double(wait) / 1000
        return JamError(
            .rateLimited, "too many \(kind.noun) at once; try again in \(seconds < 10 ? String(format: "%.1f", seconds) : String(Int(seconds.rounded(.up)))) s",
            retryAfterMs: wait)
    }

    /// Applies a member's command (or forwards it to the owner), answering `replyId`; a
    /// repeated `replyId` gets its first answer instead.
    func receiveCommand(_ command: Command, from connectionID: ConnectionID, user: UserID, replyId: String?, relay: String?) {
        if let replyId, answerRetry(command, replyId, by: user, on: connectionID) { return }
        applyCommand(command, from: connectionID, user: user, replyId: replyId, relay: relay)
    }

    /// Sends the stored answer of `replyId` again, if `user` had it answered, or refuses the
    /// id where it answered another command; true when it did either.
    func answerRetry(_ command: Command, _ replyId: String, by user: UserID, on connectionID: ConnectionID) -> Bool {
        answerRetry(
            replyId, sentWith: RequestFingerprint.forSocket(command), what: command.logName,
            showingChoicesOf: command.changesOwnChoices ? user : nil, by: user, on: connectionID)
    }

    /// Sends the stored answer of `replyId` again (followed by `showingChoicesOf`'s choices),
    /// if `user` had it answered, or refuses the id where it answered a request of another
    /// `fingerprint`, or waits for the owner's answer to another command or is held for one
    /// while the session is taken over; true when it did either.
    private func answerRetry(
        _ replyId: String, sentWith fingerprint: @autoclosure () -> UInt64, what: String, showingChoicesOf chooser: UserID?, by user: UserID,
        on connectionID: ConnectionID
    ) -> Bool {
        let key = Self.answerKey(user, replyId)
        var found = answers.lookup(key, sentWith: fingerprint())
        // On a node that forwards, the id may be on its way to the owner with a command the
        // owner will refuse this one for; the same command sent again takes its place.
        if found == .none, !forwards.isEmpty, case .socket(_, let pending)? = forwards[key], RequestFingerprint.forSocket(pending) != fingerprint() {
            found = .keyUsedForAnotherRequest
        }
        // While the session is taken over the id may be held with a command applied once the
        // takeover ends (its socket still open): a device-sync request performed now would
        // take the id from it.
        if found == .none, let held = heldDuringTakeover,
            let first = held.first(where: { $0.replyId == replyId && $0.user == user && connections[$0.connection] != nil }),
            RequestFingerprint.forSocket(first.command) != fingerprint()
        {
            found = .keyUsedForAnotherRequest
        }
        switch found {
        case .answered(let answer):
            replyWithoutRecord(answer, to: connectionID, showingChoicesOf: chooser)
        case .keyUsedForAnotherRequest:
            // Not kept: the id still answers the request it was first sent with.
            noteRefusal(Self.idReused, by: user, what: what)
            reply(to: connectionID, wire.error(Self.idReused, id: replyId, state: state, now: environment.clock.now()))
        case .none:
            return false
        }
        return true
    }

    /// Queues an answer no record carries (a stored one sent again, a refusal, an ack of a
    /// change that changed nothing), followed by `user`'s choices when given: a vote's or skip
    /// request's answer says what the member chose then, and their client shows it as their
    /// choice, while another of their devices may have changed it since.
    func replyWithoutRecord(_ answer: ByteBuffer, to connection: ConnectionID, showingChoicesOf user: UserID?) {
        replyFramed(to: connection, answer)
        if let user { sendChoices(to: connection, of: user) }
    }

    /// Applies a command whose id is not answered yet (or forwards it to the owner).
    private func applyCommand(_ command: Command, from connectionID: ConnectionID, user: UserID, replyId: String?, relay: String?) {
        if heldDuringTakeover != nil {
            // The socket's earlier commands may still be on their way to the inbox: applied
            // now, this one could overtake them.
            heldDuringTakeover?.append(HeldSocketCommand(command: command, connection: connectionID, user: user, replyId: replyId, relay: relay))
            return
        }
        if role == .replica {
            forwardFromSocket(command, by: user, connection: connectionID, replyId: replyId)
            return
        }
        do {
            try take(
                .command(command, by: user), cause: .command(command, by: user, connection: connectionID, relay: relay),
                reply: replyId.map { TurnReply(connection: connectionID, user: user, id: $0, toRestCall: false) })
        } catch {
            let answer = WebSocketText.frame(wire.error(error, id: replyId, state: state, now: environment.clock.now()))
            if let replyId {
                answers.remember(answer, for: Self.answerKey(user, replyId), lane: AnswerCache.Lane(of: command), command: RequestFingerprint.forSocket(command))
            }
            replyFramed(to: connectionID, answer)
        }
    }
}
