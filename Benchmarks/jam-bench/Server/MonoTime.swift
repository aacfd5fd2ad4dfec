import Foundation

/// The monotonic clock every measurement in the benchmark uses.
enum MonoTime {
    /// Nanoseconds on CLOCK_MONOTONIC.
    static func nanos() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Milliseconds on CLOCK_MONOTONIC.
    static func ms() -> Double { Double(nanos()) / 1_000_000 }

    /// Seconds on CLOCK_MONOTONIC.
    static func seconds() -> Double { Double(nanos()) / 1_000_000_000 }

    /// Unix time in milliseconds (CLOCK_REALTIME: the clock the server stamps with).
    static func wallMs() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
    }
}
