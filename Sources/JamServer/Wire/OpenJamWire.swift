import JamCore
import JamProtocol

/// OpenJam's own protocol: every domain event is broadcast as it is.
struct OpenJamWire: SessionWire {
    var socketsAreMembership: Bool { false }

    func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame] {
        events.map { WireFrame(seq: $0.seq, frame: $0.jsonString(), audience: .everyone, logged: true) }
    }

    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> String {
        envelope(.stateSync(state.view(for: user)), state: state, now: now)
    }

    func ack(_ ack: Ack, state: SessionState, now: Millis) -> String? {
        envelope(.ack(ack), state: state, now: now)
    }

    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> String {
        envelope(.error(ErrorEvent(id: id, code: error.code, message: error.message)), state: state, now: now)
    }

    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> String {
        envelope(.pong(Pong(clientSendTime: clientSendTime, serverReceiveTime: receivedAt, serverSendTime: sentAt)), state: state, now: now)
    }

    private func envelope(_ event: ServerEvent, state: SessionState, now: Millis) -> String {
        ServerEnvelope(event: event, epoch: state.epoch, seq: state.seq, timestamp: now).jsonString()
    }
}
