import NIOCore

/// How a realtime socket finds out that its peer is gone without a word (a phone out of
/// range, a laptop closed): it pings at each tick, and a socket that has heard nothing since
/// its ping by the next tick is closed, so the member leaves. A profile picks when pings go
/// out; any frame from the peer counts as an answer.
package enum Heartbeat: Sendable, Equatable {
    /// A tick pings only a socket silent for a whole interval, so a busy socket costs no
    /// pings; a dead peer is closed 2–3 intervals after it was last heard.
    case afterSilence(TimeAmount)
    /// Every tick pings, heard or not, as a `ws` server's sweep pings every member; a dead
    /// peer is closed 1–2 intervals after it was last heard.
    case every(TimeAmount)

    /// Time between ticks.
    package var interval: TimeAmount {
        switch self {
        case .afterSilence(let interval), .every(let interval): interval
        }
    }
}

/// One socket's heartbeat as a value: what was heard and when goes in, each tick says
/// whether to ping or to close. The handler carries the actions out.
struct HeartbeatState {
    /// What a tick asks of the socket.
    enum Action: Equatable {
        case none
        case ping
        /// The last ping found the peer silent until this tick.
        case close
    }

    let heartbeat: Heartbeat
    private var lastHeard: NIODeadline
    private var awaitingAnswer = false

    init(_ heartbeat: Heartbeat, now: NIODeadline) {
        self.heartbeat = heartbeat
        lastHeard = now
    }

    /// The peer sent a frame (any frame: a message is as good as a pong).
    mutating func heard(at now: NIODeadline) {
        lastHeard = now
        awaitingAnswer = false
    }

    /// A tick, one interval after the last.
    mutating func tick(at now: NIODeadline) -> Action {
        if awaitingAnswer { return .close }
        switch heartbeat {
        case .afterSilence(let interval):
            guard now - lastHeard >= interval else { return .none }
        case .every:
            break
        }
        awaitingAnswer = true
        return .ping
    }
}
