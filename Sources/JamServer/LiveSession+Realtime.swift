import JamCore
import JamProtocol

/// Sockets: attaching, detaching and OpenJam's own realtime commands.
extension LiveSession {
    /// Attaches a socket. OpenJam: the member counts as connected and receives either the
    /// missed frames after `lastSeq` or a `stateSync`. Socket-membership profiles: the
    /// user joins (if not yet a member), an older socket of theirs is replaced, and a
    /// `stateSync` follows.
    func attach(_ connection: Connection, displayName: String, lastSeq: Int64?) throws(JamError) {
        let user = connection.userId
        if wire.socketsAreMembership {
            if state.member(user) == nil {
                try apply(.join(displayName: displayName), by: user, connection: connection.id, relay: nil)
            }
            for (key, entry) in attached where entry.connection.userId == user {
                entry.connection.close(code: PirateRadio.CloseCode.replaced, reason: "replaced by a newer connection")
                attached[key] = nil
                Metrics.connections.decrement()
            }
        } else {
            try apply(.connect, by: user, connection: connection.id, relay: nil)
        }
        Metrics.connections.increment()
        attached[connection.id] = Attached(connection: connection, syncedSeq: state.seq)
        if let lastSeq, replay(to: connection.id, after: lastSeq) {
            return
        }
        sendStateSync(to: connection.id)
    }

    /// Where sockets are membership, members without one leave (after a restart none has one).
    func releaseMembersWithoutSockets() {
        guard wire.socketsAreMembership else { return }
        for member in state.members where !attached.values.contains(where: { $0.connection.userId == member.userId }) {
            do {
                try apply(.leave, by: member.userId, connection: nil, relay: nil)
            } catch {
                logger.debug("leave not applied", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Detaches a socket that closed.
    func detach(_ connection: Connection) {
        guard attached.removeValue(forKey: connection.id) != nil else { return }
        Metrics.connections.decrement()
        socketGone(connection)
    }

    /// A socket is no longer attached: the member disconnects (or, where sockets are
    /// membership, leaves once their last socket is gone).
    func socketGone(_ connection: Connection) {
        let user = connection.userId
        guard !state.hasEnded, state.member(user) != nil else { return }
        let command: Command
        if wire.socketsAreMembership {
            guard !attached.values.contains(where: { $0.connection.userId == user }) else { return }
            command = .leave
        } else {
            command = .disconnect
        }
        do {
            try apply(command, by: user, connection: connection.id, relay: nil)
        } catch {
            logger.debug("socket close not applied", metadata: ["error": "\(error)"])
        }
    }

    /// Handles one decoded OpenJam frame from `connection`; replies go to its outbox.
    func handle(_ frame: ClientFrame, from connection: Connection, receivedAt: Double) {
        guard attached[connection.id] != nil else { return }
        let now = environment.clock.now()
        let command: Command
        switch frame.command {
        case .hello(let hello):
            if let lastSeq = hello.lastSeq, replay(to: connection.id, after: lastSeq) {
                // The missed frames are on their way.
            } else {
                sendStateSync(to: connection.id)
            }
            if let id = frame.id { reply(to: connection.id, wire.ack(Ack(id: id), state: state, now: now)) }
            return
        case .ping(let ping):
            let pong = wire.pong(clientSendTime: ping.clientSendTime, receivedAt: receivedAt, sentAt: environment.clock.nowPrecise(), state: state, now: now)
            deliver(pong, to: connection.id)
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
        execute(command, from: connection, replyId: frame.id, relay: nil)
    }

    /// Applies a socket command: an ack (where the protocol has one) or an error goes back.
    /// A command id seen before gets the answer it got then, and is not applied again.
    func execute(_ command: Command, from connection: Connection, replyId: String?, relay: String?) {
        let key = replyId.map { "\(connection.userId.rawValue) \($0)" }
        if let key, let answer = recentAnswers[key] {
            reply(to: connection.id, answer)
            return
        }
        let answer: String?
        do {
            let outcome = try apply(command, by: connection.userId, connection: connection.id, relay: relay)
            answer = replyId.flatMap { wire.ack(Ack(id: $0, itemId: outcome.itemId, score: outcome.score), state: state, now: environment.clock.now()) }
        } catch {
            answer = wire.error(error, id: replyId, state: state, now: environment.clock.now())
        }
        reply(to: connection.id, answer)
        if let key, let answer { remember(answer, for: key) }
    }

    private func remember(_ answer: String, for key: String) {
        recentAnswers[key] = answer
        recentAnswerOrder.append(key)
        if recentAnswerOrder.count > Self.recentAnswerLimit {
            let excess = recentAnswerOrder.count - Self.recentAnswerLimit
            for old in recentAnswerOrder.prefix(excess) { recentAnswers[old] = nil }
            recentAnswerOrder.removeFirst(excess)
        }
    }

    /// Answers a frame that could not be decoded.
    func reject(_ error: JamError, id: String?, to connection: Connection) {
        Metrics.commandErrors.increment()
        reply(to: connection.id, wire.error(error, id: id, state: state, now: environment.clock.now()))
    }

    /// Sends the logged frames after `lastSeq`; false when the log no longer holds them.
    func replay(to connection: Int, after lastSeq: Int64) -> Bool {
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
}
