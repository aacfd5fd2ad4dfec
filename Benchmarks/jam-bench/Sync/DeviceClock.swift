import Foundation
import JamClient

/// A simulated device's local clock: the system's monotonic clock shifted by a fixed
/// offset and running `driftPpm` fast (a phone's crystal is off by tens of ppm).
///
/// Every device and the server run on this one machine, so the truth is known exactly:
/// the server stamps with CLOCK_REALTIME, so the true `server − local` offset of a device
/// at monotonic instant m is `(realtime − monotonic) + m − local(m)`.
struct DeviceClock: MonotonicClock {
    /// How far this device's clock was ahead of the system's monotonic clock when made, ms.
    let offsetMs: Double
    /// How much faster than the system's clock it runs, parts per million.
    let driftPpm: Double
    private let origin: Double
    private let system = SystemMonotonicClock()

    /// Creates a clock `offsetMs` ahead of the system's monotonic clock, running `driftPpm` fast.
    init(offsetMs: Double, driftPpm: Double = 0) {
        self.offsetMs = offsetMs
        self.driftPpm = driftPpm
        self.origin = system.now()
    }

    /// The device's local time, ms.
    func now() -> Double { local(atMonotonic: system.now()) }

    /// This device's local instant at the system monotonic instant `monotonicMs`.
    func local(atMonotonic monotonicMs: Double) -> Double {
        monotonicMs + offsetMs + (monotonicMs - origin) * driftPpm * 1e-6
    }

    /// The system monotonic instant at this device's local instant `localMs`.
    func monotonic(atLocal localMs: Double) -> Double {
        (localMs - offsetMs + origin * driftPpm * 1e-6) / (1 + driftPpm * 1e-6)
    }

    /// The true `server − local` offset at system monotonic instant `monotonicMs`.
    func trueOffset(atMonotonic monotonicMs: Double, serverMinusMonotonic: Double) -> Double {
        serverMinusMonotonic + monotonicMs - local(atMonotonic: monotonicMs)
    }
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
