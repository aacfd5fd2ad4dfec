import NIOCore

/// A socket's timers, one of each kind: a ping or an idle check schedules its next run in its
/// own slot, so a socket open for days holds four, not one more every tick.
struct SocketTimers {
    var firstFrame: Scheduled<Void>? { didSet { oldValue?.cancel() } }
    var ping: Scheduled<Void>? { didSet { oldValue?.cancel() } }
    var idle: Scheduled<Void>? { didSet { oldValue?.cancel() } }
    var closeGrace: Scheduled<Void>? { didSet { oldValue?.cancel() } }

    /// How many are held (for tests: a long-open socket must not hold more).
    var count: Int { [firstFrame, ping, idle, closeGrace].count { $0 != nil } }

    mutating func cancelAll() {
        firstFrame = nil
        ping = nil
        idle = nil
        closeGrace = nil
    }
}
