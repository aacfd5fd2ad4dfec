import Foundation

/// A monotonic local clock in milliseconds with an arbitrary origin.
///
/// Every local instant in the sync code (ping stamps, scheduled starts, player
/// positions) is read from one `MonotonicClock`, so tests can substitute a
/// virtual clock and the production code never depends on the wall clock,
/// which NTP or the user may step.
public protocol MonotonicClock: Sendable {
    /// Now, in milliseconds since the clock's origin. Never decreases.
    func now() -> Double
}

/// The system's monotonic clock, based on `ContinuousClock` (it keeps counting
/// while the device sleeps, so an offset learned before a sleep stays valid).
///
/// All instances share one origin (the first use in the process), so values
/// from different instances are comparable.
public struct SystemMonotonicClock: MonotonicClock {
    private static let origin = ContinuousClock.now

    /// Creates the clock.
    public init() {}

    /// Milliseconds since an arbitrary start that never jumps.
    public func now() -> Double {
        Self.milliseconds(Self.origin.duration(to: ContinuousClock.now))
    }

    /// Converts a `Duration` to fractional milliseconds.
    static func milliseconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
    }
}

/// Suspends the caller for a while; injected so loops can be tested in virtual time.
public protocol Sleeper: Sendable {
    /// Suspends for `ms` milliseconds (returns at once for zero or less).
    /// Throws `CancellationError` when the calling task is cancelled.
    func sleep(ms: Double) async throws
}

/// The real sleeper: `Task.sleep` on the continuous clock.
public struct TaskSleeper: Sleeper {
    /// Creates the sleeper.
    public init() {}

    /// Waits `ms` milliseconds of monotonic time; throws when cancelled.
    public func sleep(ms: Double) async throws {
        guard ms > 0, ms.isFinite else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(for: .nanoseconds(Int64(ms * 1_000_000)), clock: .continuous)
    }
}
