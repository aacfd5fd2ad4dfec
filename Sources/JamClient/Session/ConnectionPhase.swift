import JamProtocol

/// Where a client's realtime connection stands, for an app to show.
public enum ConnectionPhase: Sendable, Equatable {
    /// Not started, or stopped by its owner (`run()` cancelled).
    case idle
    /// Opening a socket (attempt 1 is the first).
    case connecting(attempt: Int)
    /// Open, and the server answers on it; anything missed while away comes first, in order.
    case connected
    /// Closed; the next attempt starts after the delay.
    case retrying(attempt: Int, afterMs: Double, reason: String)
    /// Closed for good (unknown session, removed, session ended, bad credentials).
    case failed(JamError)

    /// Whether the connection closed for good.
    public var isFailed: Bool {
        switch self {
        case .failed: true
        case .idle, .connecting, .connected, .retrying: false
        }
    }
}

/// What a `SessionClient` tells its subscribers.
public enum ClientUpdate: Sendable {
    /// A frame from the server, as received.
    case envelope(ServerEnvelope)
    /// The session after that frame.
    case mirror(SessionMirror)
    /// The connection changed.
    case phase(ConnectionPhase)
    /// The client swapped its token for a fresh one (half its life was gone): an app that
    /// keeps the member's token keeps this one, and when it is due again (`JamAPI.tokenRefreshAt`).
    case token(GuestAuthResponse, refreshAt: Millis?)
}
