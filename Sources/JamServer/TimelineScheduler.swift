import JamProtocol
import Logging
import ServiceLifecycle
import Synchronization

/// Wakes sessions when their timeline has something to do (commit a start, prepare
/// the next item, auto-advance). One loop for all sessions.
public final class TimelineScheduler: Service, Sendable {
    private let clock: any ServerClock
    private let entries = Mutex<[ObjectIdentifier: (at: Millis, session: LiveSession)]>([:])
    /// Longest sleep, so a newly scheduled earlier deadline is noticed quickly.
    private let maxSleepMs: Int64 = 10

    /// Creates the scheduler.
    public init(clock: any ServerClock) {
        self.clock = clock
    }

    /// Sets (or with `nil`, clears) when `session` must next be woken.
    func schedule(_ session: LiveSession, at deadline: Millis?) {
        entries.withLock { table in
            if let deadline {
                table[ObjectIdentifier(session)] = (deadline, session)
            } else {
                table[ObjectIdentifier(session)] = nil
            }
        }
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let now = clock.now()
            let due = entries.withLock { table -> [LiveSession] in
                var due: [LiveSession] = []
                for (key, entry) in table where entry.at <= now {
                    due.append(entry.session)
                    table[key] = nil
                }
                return due
            }
            for session in due { await session.tick() }
            let next = entries.withLock { $0.values.map(\.at).min() }
            let wait = max(1, min(maxSleepMs, (next ?? Millis.max) - clock.now()))
            do {
                try await Task.sleep(for: .milliseconds(wait))
            } catch {
                return
            }
        }
    }
}
