/// When a socket that still looks open counts as dead, so the client drops it and reconnects
/// instead of waiting for TCP to give up: many minutes while pings sit unacknowledged, and
/// never when the server would be the only one to write (a phone that changed networks, a
/// server whose machine went away).
///
/// The web client's `js/connection-watch.js` applies the same rule; the shared fixture
/// `Tests/Fixtures/ClientParity/connection-watch.json` proves the two agree.
public struct ConnectionWatch: Sendable, Equatable {
    /// A socket the server has not answered on yet is given up this long after it opened, ms.
    public var openLimitMs: Double
    /// An answered socket is dead once its oldest ping has waited this long for its pong and
    /// nothing at all came from the server for as long, ms.
    public var silenceLimitMs: Double
    /// How often the client looks, ms.
    public var checkEveryMs: Double
    /// An answered socket nothing came on for this long is sent a ping of its own, ms: a client
    /// that pings for nothing else (no clock to keep) would otherwise never find a dead socket.
    public var quietProbeMs: Double
    /// A command that has waited this long for its answer, on a socket nothing came on for as
    /// long, sends that ping sooner, ms: someone is waiting on it.
    public var commandProbeMs: Double

    /// Creates the rule; the defaults are the web client's.
    public init(
        openLimitMs: Double = 10_000, silenceLimitMs: Double = 6_000, checkEveryMs: Double = 2_000,
        quietProbeMs: Double = 15_000, commandProbeMs: Double = 2_000
    ) {
        self.openLimitMs = openLimitMs
        self.silenceLimitMs = silenceLimitMs
        self.checkEveryMs = checkEveryMs
        self.quietProbeMs = quietProbeMs
        self.commandProbeMs = commandProbeMs
    }

    /// Whether to drop the socket now.
    ///
    /// - Parameters:
    ///   - answered: whether the server has answered on this socket yet.
    ///   - sinceOpenedMs: since the socket opened.
    ///   - oldestUnansweredPingMs: how long the oldest ping without its pong has waited; `nil`
    ///     when every ping was answered. A quiet session sends nothing, so silence alone is no
    ///     sign; a ping the server does not answer is.
    ///   - sinceHeardMs: since the last frame from the server (or the socket's opening).
    public func isDead(answered: Bool, sinceOpenedMs: Double, oldestUnansweredPingMs: Double?, sinceHeardMs: Double) -> Bool {
        guard answered else { return sinceOpenedMs > openLimitMs }
        guard let waited = oldestUnansweredPingMs else { return false }
        return waited > silenceLimitMs && sinceHeardMs > silenceLimitMs
    }

    /// Whether to send a ping now to learn whether the socket is alive: it is answered, no ping
    /// already waits (its pong or its silence will tell), and nothing came for `quietProbeMs`,
    /// or for `commandProbeMs` while a command has waited as long. `isDead` then judges the ping.
    ///
    /// - Parameters:
    ///   - oldestWaitingCommandMs: how long the oldest command without its answer has waited;
    ///     `nil` when none waits.
    public func shouldProbe(answered: Bool, oldestUnansweredPingMs: Double?, oldestWaitingCommandMs: Double?, sinceHeardMs: Double) -> Bool {
        guard answered, oldestUnansweredPingMs == nil else { return false }
        if sinceHeardMs > quietProbeMs { return true }
        guard let waited = oldestWaitingCommandMs else { return false }
        return waited > commandProbeMs && sinceHeardMs > commandProbeMs
    }
}
