import Foundation
import JamClient

/// A simulated device's local clock: the system's monotonic clock shifted by a fixed offset.
///
/// Every device and the server run on this one machine, so the truth is known exactly:
/// the server stamps with CLOCK_REALTIME, so the true `server − local` offset of a device
/// at any instant is `(realtime − monotonic) − offsetMs`.
struct DeviceClock: MonotonicClock {
    /// How far this device's clock is ahead of the system's monotonic clock, ms.
    let offsetMs: Double
    private let system = SystemMonotonicClock()

    /// Creates a clock `offsetMs` ahead of the system's monotonic clock.
    init(offsetMs: Double) {
        self.offsetMs = offsetMs
    }

    /// The device's local time, ms.
    func now() -> Double { system.now() + offsetMs }

    /// This device's local instant at the system monotonic instant `monotonicMs`.
    func local(atMonotonic monotonicMs: Double) -> Double { monotonicMs + offsetMs }
}

/// The relation between the system's monotonic clock (as `SystemMonotonicClock` reads it)
/// and the server's clock (CLOCK_REALTIME), measured by reading both back to back.
enum TrueTime {
    /// `realtime − monotonic` now, in ms; the reading brackets the realtime read with two
    /// monotonic reads and keeps the tightest of a few tries, so its error is well under 10 µs.
    static func serverMinusMonotonic() -> Double {
        let clock = SystemMonotonicClock()
        var best = (width: Double.infinity, value: 0.0)
        for _ in 0..<5 {
            let before = clock.now()
            let wall = MonoTime.wallMs()
            let after = clock.now()
            if after - before < best.width { best = (after - before, wall - (before + after) / 2) }
        }
        return best.value
    }

    /// The system monotonic instant (as `SystemMonotonicClock` reads it) now.
    static func monotonicNow() -> Double { SystemMonotonicClock().now() }

    /// The server instant now.
    static func serverNow() -> Double { monotonicNow() + serverMinusMonotonic() }
}
