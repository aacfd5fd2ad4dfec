import JamProtocol

/// Thrown when a caller exceeds a limit; becomes 429 with `Retry-After`.
package struct RateLimitedError: Error {
    package let retryAfter: Int

    /// OpenJam's answer to it (REST adds `Retry-After`).
    package var refusal: JamError { JamError(.rateLimited, "too many requests; retry in \(retryAfter) s") }
}

/// Fixed-window counters per key ("join:127.0.0.1", "create:<user>").
package actor RateLimiter {
    private var windows: [String: (start: Millis, count: Int, windowMs: Millis)] = [:]
    private let clock: any ServerClock
    private var lastSweep: Millis = 0

    init(clock: any ServerClock) {
        self.clock = clock
    }

    /// Counts one request for `key`; throws when more than `limit` arrived within `window` seconds.
    package func check(_ key: String, limit: (count: Int, window: Int)) throws(RateLimitedError) {
        try check([(key, limit)])
    }

    /// Counts one request under every key, or under none when any of them is used up, so a
    /// request one limit refuses spends nothing of the others.
    package func check(_ keys: [(key: String, limit: (count: Int, window: Int))]) throws(RateLimitedError) {
        let now = clock.now()
        sweep(now: now)
        var counted: [(key: String, entry: (start: Millis, count: Int, windowMs: Millis))] = []
        var retryAfter = 0
        for (key, limit) in keys {
            let windowMs = Millis(limit.window) * 1000
            var entry = windows[key] ?? (now, 0, windowMs)
            // A window over, or one that starts after now (the wall clock was set back), starts again.
            if now - entry.start >= windowMs || entry.start > now { entry = (now, 0, windowMs) }
            if entry.count < limit.count {
                entry.count += 1
                counted.append((key, entry))
            } else {
                retryAfter = max(retryAfter, Int((entry.start + windowMs - now + 999) / 1000))
            }
        }
        guard counted.count == keys.count else { throw RateLimitedError(retryAfter: max(1, retryAfter)) }
        for (key, entry) in counted { windows[key] = entry }
    }

    /// Drops windows that are over, now and then, so the table holds only the keys counting
    /// now: a client sending from ever new addresses adds keys for a window each, not an hour.
    private func sweep(now: Millis) {
        guard now - lastSweep >= Self.sweepEveryMs || now < lastSweep else { return }
        lastSweep = now
        windows = windows.filter { now - $0.value.start < $0.value.windowMs && $0.value.start <= now }
    }

    /// How often the table is swept.
    static let sweepEveryMs: Millis = 10_000

    /// Keys held (for tests: windows that are over must go).
    var keyCount: Int { windows.count }
}
