import JamCore
import JamProtocol
import NIOCore

extension ClientFrame: DecodedMessage {}

/// OpenJam's own protocol: every domain event is broadcast as it is, encoded once for all.
struct OpenJamWire: SessionWire {
    var socketsAreMembership: Bool { false }
    var replacedSocketClose: (code: UInt16, reason: String)? { nil }

    func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame] {
        var frames = events.map { WireFrame(seq: $0.seq, bytes: ByteBuffer(bytes: $0.jsonBytes()), audience: .everyone, logged: true) }
        if let mine = Self.choicesFrame(after: events, cause: cause, state: state, now: now) { frames.append(mine) }
        return frames
    }

    /// The sender's own choices for their other sockets, when their command changed a vote or a
    /// skip request: the broadcasts say how many, not who. Not logged: a device that resumes
    /// gets them after its missed frames (`passing`), and a whole state carries them anyway.
    private static func choicesFrame(after events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> WireFrame? {
        let audience: Audience
        let user: UserID
        switch cause {
        case .command(let command, let sender, let connection, _):
            guard command.changesOwnChoices, let member = state.member(sender) else { return nil }
            // Most members vote from one device, which has its answer: nothing to encode.
            if let connection {
                guard member.connections > 1 else { return nil }
                audience = .userExcept(sender, connection)
            } else {
                guard member.connected else { return nil }
                audience = .user(sender)
            }
            user = sender
        case .followed(let command, let sender):
            // This node cannot tell which socket sent it (maybe one here, with its answer).
            guard command.changesOwnChoices, state.member(sender)?.connected == true else { return nil }
            audience = .user(sender)
            user = sender
        case .tick:
            return nil
        }
        guard let last = events.last else { return nil }
        let envelope = ServerEnvelope(event: .myChoices(state.choices(of: user)), epoch: state.epoch, seq: last.seq, timestamp: now)
        return WireFrame(seq: last.seq, bytes: ByteBuffer(bytes: envelope.jsonBytes()), audience: audience, logged: false)
    }

    func request(for message: any DecodedMessage, from user: UserID, state: SessionState, ids: any IDGenerator, now: Millis) -> SessionRequest {
        guard let frame = message as? ClientFrame else {
            return .refuse(JamError(.internal, "the server could not read the message"), replyId: nil)
        }
        let command: Command
        switch frame.command {
        case .hello(let hello): return .hello(lastSeq: hello.lastSeq, replyId: frame.id)
        case .ping(let ping): return .ping(clientSendTime: ping.clientSendTime)
        case .addToQueue(let add): command = .add(track: add.track, nonce: add.nonce, itemId: ids.next())
        case .removeFromQueue(let ref): command = .remove(itemId: ref.itemId)
        case .vote(let vote): command = .vote(itemId: vote.itemId, value: vote.value)
        case .skip(let skip): command = .skip.checked(whileCurrent: skip.epoch)
        case .requestSkip(let request): command = .requestSkip.checked(whileCurrent: request.epoch)
        case .withdrawSkipRequest(let withdrawal): command = .withdrawSkipRequest.checked(whileCurrent: withdrawal.epoch)
        case .play: command = .play
        case .pause(let pause): command = .pause.checked(whileCurrent: pause.epoch)
        case .resume(let resume): command = .resume.checked(whileCurrent: resume.epoch)
        case .seek(let seek): command = .seek(positionMs: seek.positionMs).checked(whileCurrent: seek.epoch)
        case .ready(let ready): command = .ready(epoch: ready.epoch)
        case .syncReport(let report): return .deviceSync(.report(report), replyId: frame.id)
        case .updateSettings(let patch): command = .updateSettings(patch)
        case .promote(let promote): command = .setRole(userId: promote.userId, role: promote.role ?? .cohost)
        case .kick(let ref): command = .kick(userId: ref.userId)
        case .leave: command = .leave
        case .setDeviceDelay(let set):
            command = .setDeviceDelay(DeviceDelay(userId: set.userId ?? user, deviceId: set.deviceId, delayMs: set.delayMs))
        case .calibrate(let calibrate): return .deviceSync(.calibrate(calibrate), replyId: frame.id)
        case .calibrationReport(let report): return .deviceSync(.calibrationReport(report), replyId: frame.id)
        case .resync(let resync): return .deviceSync(.resync(resync), replyId: frame.id)
        }
        return .command(command, replyId: frame.id, relay: nil)
    }

    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> ByteBuffer {
        envelope(.stateSync(state.view(for: user)), state: state, now: now)
    }

    func ack(_ ack: Ack, state: SessionState, now: Millis) -> ByteBuffer? {
        envelope(.ack(ack), state: state, now: now)
    }

    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> ByteBuffer {
        envelope(.error(ErrorEvent(id: id, code: error.code, message: error.message, retryAfterMs: error.retryAfterMs)), state: state, now: now)
    }

    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> ByteBuffer {
        envelope(.pong(Pong(clientSendTime: clientSendTime, serverReceiveTime: receivedAt, serverSendTime: sentAt)), state: state, now: now)
    }

    func passing(_ event: ServerEvent, state: SessionState, now: Millis) -> ByteBuffer? {
        envelope(event, state: state, now: now)
    }

    private func envelope(_ event: ServerEvent, state: SessionState, now: Millis) -> ByteBuffer {
        ByteBuffer(bytes: ServerEnvelope(event: event, epoch: state.epoch, seq: state.seq, timestamp: now).jsonBytes())
    }
}
