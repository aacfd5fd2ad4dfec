import JamServer
import Synchronization

/// The wall clock moved forward by however much a test says, so a test can jump past an
/// expiry (a day, a month) while the server's timers keep running in real time.
public final class ShiftedClock: ServerClock {
    private let shiftMs = Mutex<Double>(0)

    public init() {}

    /// Moves the clock `ms` forward.
    public func advance(byMs ms: Double) {
        shiftMs.withLock { $0 += ms }
    }

    public func nowPrecise() -> Double {
        SystemClock().nowPrecise() + shiftMs.withLock { $0 }
    }
}
