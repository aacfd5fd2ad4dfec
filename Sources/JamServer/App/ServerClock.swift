import Foundation
import JamProtocol

/// Server time, injectable so tests can control it.
public protocol ServerClock: Sendable {
    /// Unix time in milliseconds, with sub-millisecond precision.
    func nowPrecise() -> Double
}

extension ServerClock {
    /// Unix time in whole milliseconds.
    public func now() -> Millis { Millis(nowPrecise().rounded(.down)) }
}

/// The real wall clock.
public struct SystemClock: ServerClock {
    /// Creates the clock.
    public init() {}

    /// Unix time now in milliseconds, with the fraction.
    public func nowPrecise() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
    }
}
