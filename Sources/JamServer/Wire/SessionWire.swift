import JamCore
import JamProtocol

/// Who receives a frame.
enum Audience: Sendable, Equatable {
    case everyone
    case everyoneExcept(connection: Int)
    case user(UserID)
}

/// A frame to send once the change that produced it is stored.
struct WireFrame: Sendable {
    /// The session `seq` the frame follows (connections synced past it skip it).
    var seq: Int64
    var frame: String
    var audience: Audience
    /// Kept in the replay log for `hello {lastSeq}`.
    var logged: Bool
}

/// What produced a batch of domain events.
enum WireCause: Sendable {
    /// A member's command; `relay` is the message data a protocol forwards as sent.
    case command(Command, by: UserID, connection: Int?, relay: String?)
    /// Time passing (auto-advance, grace periods).
    case tick
}

/// How a session's changes look on the wire: OpenJam's own protocol or a profile's.
protocol SessionWire: Sendable {
    /// True when an open socket is membership: opening one joins, closing the last leaves,
    /// and a user holds one socket at a time.
    var socketsAreMembership: Bool { get }

    /// The frames for what one change produced.
    mutating func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame]

    /// The whole state for one member.
    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> String

    /// The answer to a command with an id, if the protocol has one.
    func ack(_ ack: Ack, state: SessionState, now: Millis) -> String?

    /// The answer to a refused or unreadable message.
    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> String

    /// The answer to a clock-sync ping.
    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> String
}
