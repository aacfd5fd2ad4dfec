import JamProtocol

/// Thrown when a caller exceeds a limit; becomes 429 with `Retry-After`.
package struct RateLimitedError: Error {
    package let retryAfter: Int
}

/// Fixed-window counters per key ("join:127.0.0.1", "create:<user>").
package actor RateLimiter {
    private var windows: [String: (start: Millis, count: Int)] = [:]
    private let clock: any ServerClock
    private var lastSweep: Millis = 0

    init(clock: any ServerClock) {
        self.clock = clock
    }

    /// Counts one request for `key`; throws when more than `limit` arrived within `window` seconds.
    package func check(_ key: String, limit: (count: Int, window: Int)) throws(RateLimitedError) {
        let now = clock.now()
        let windowMs = Millis(limit.window) * 1000
        sweep(now: now, windowMs: windowMs)
        var entry = windows[key] ?? (now, 0)
        if now - entry.start >= windowMs { entry = (now, 0) }
        guard entry.count < limit.count else {
            let retry = Int((entry.start + windowMs - now + 999) / 1000)
            throw RateLimitedError(retryAfter: max(1, retry))
        }
        entry.count += 1
        windows[key] = entry
    }

    /// Drops stale windows now and then so the table stays small.
    private func sweep(now: Millis, windowMs: Millis) {
        guard now - lastSweep > 60_000 else { return }
        lastSweep = now
        windows = windows.filter { now - $0.value.start < 3_600_000 }
    }
}
