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
        try check([(key, limit)])
    }

    /// Counts one request under every key, or under none when any of them is used up, so a
    /// request one limit refuses spends nothing of the others.
    package func check(_ keys: [(key: String, limit: (count: Int, window: Int))]) throws(RateLimitedError) {
        let now = clock.now()
        sweep(now: now)
        var counted: [(key: String, entry: (start: Millis, count: Int))] = []
        var retryAfter = 0
        for (key, limit) in keys {
            let windowMs = Millis(limit.window) * 1000
            var entry = windows[key] ?? (now, 0)
            if now - entry.start >= windowMs { entry = (now, 0) }
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

    /// Drops stale windows now and then so the table stays small.
    private func sweep(now: Millis) {
        guard now - lastSweep > 60_000 else { return }
        lastSweep = now
        windows = windows.filter { now - $0.value.start < 3_600_000 }
    }
}
