import JamCore
import JamProtocol
import NIOCore

/// Whom a session's turn answers: a socket's command with an id (on this node or forwarded
/// from another), or a REST call forwarded from another node.
struct TurnReply {
    /// The socket on this node that sent the command, if one did.
    var connection: ConnectionID?
    var user: UserID
    /// The command's id, which the answer carries.
    var id: String
    /// The answer goes to a REST call on another node, which reads it (`outcome(fromAck:)`)
    /// rather than passing it to a socket.
    var toRestCall: Bool

    /// The answer's JSON: the wire's ack for a socket (none where the wire has no acks), and
    /// OpenJam's for a REST call whatever the wire, as every forwarded REST call needs one.
    func answer(_ ack: Ack, wire: any SessionWire, state: SessionState, now: Millis) -> ByteBuffer? {
        guard toRestCall else { return wire.ack(ack, state: state, now: now) }
        return ByteBuffer(bytes: ServerEnvelope(event: .ack(ack), epoch: state.epoch, seq: state.seq, timestamp: now).jsonBytes())
    }
}
