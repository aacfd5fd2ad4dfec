import Foundation

/// A snapshot of the relation between the local monotonic clock and server time.
///
/// `offset(atLocal: t) = serverTime − t` is modelled as a straight line through
/// `offsetAtReference` at `referenceLocal` with slope `driftMsPerSecond`.
/// The error bound grows with the distance from the reference by the drift
/// uncertainty.
public struct ClockEstimate: Hashable, Sendable {
    /// Local instant (ms) the estimate refers to: the newest sample in use.
    public var referenceLocal: Double
    /// `serverTime − localTime` at `referenceLocal`, in ms.
    public var offsetAtReference: Double
    /// Guaranteed bound on the error of `offsetAtReference`, in ms (see `ClockSync.errorBoundMs`).
    public var errorBoundAtReference: Double
    /// Half the lowest round trip among the samples in use, in ms (the classic NTP bound).
    public var halfRoundTripMs: Double
    /// How fast the offset changes: ms of offset per second of local time.
    public var driftMsPerSecond: Double
    /// The uncertainty assumed for `driftMsPerSecond`, in ms per second.
    public var driftUncertaintyMsPerSecond: Double

    /// Creates an estimate.
    public init(
        referenceLocal: Double, offsetAtReference: Double, errorBoundAtReference: Double, halfRoundTripMs: Double,
        driftMsPerSecond: Double, driftUncertaintyMsPerSecond: Double
    ) {
        self.referenceLocal = referenceLocal
        self.offsetAtReference = offsetAtReference
        self.errorBoundAtReference = errorBoundAtReference
        self.halfRoundTripMs = halfRoundTripMs
        self.driftMsPerSecond = driftMsPerSecond
        self.driftUncertaintyMsPerSecond = driftUncertaintyMsPerSecond
    }

    /// An estimate with a fixed, exactly known offset (tests and tools).
    public static func exact(offsetMs: Double, atLocal: Double = 0) -> ClockEstimate {
        ClockEstimate(
            referenceLocal: atLocal, offsetAtReference: offsetMs, errorBoundAtReference: 0, halfRoundTripMs: 0,
            driftMsPerSecond: 0, driftUncertaintyMsPerSecond: 0)
    }

    private var slope: Double { driftMsPerSecond / 1000 }

    /// `serverTime − localTime` at local instant `t`, drift-corrected.
    public func offset(atLocal t: Double) -> Double {
        offsetAtReference + slope * (t - referenceLocal)
    }

    /// Bound on the error of `offset(atLocal: t)`.
    public func errorBound(atLocal t: Double) -> Double {
        errorBoundAtReference + driftUncertaintyMsPerSecond / 1000 * abs(t - referenceLocal)
    }

    /// The classic bound (half the best round trip) at local instant `t`, plus drift uncertainty.
    public func halfRoundTripBound(atLocal t: Double) -> Double {
        halfRoundTripMs + driftUncertaintyMsPerSecond / 1000 * abs(t - referenceLocal)
    }

    /// The server instant (Unix ms) that corresponds to local instant `t`.
    public func serverTime(atLocal t: Double) -> Double {
        t + offset(atLocal: t)
    }

    /// The local instant that corresponds to server instant `s` (Unix ms).
    public func localTime(atServer s: Double) -> Double {
        // s = t + a + k (t − r)  =>  t = (s − a + k r) / (1 + k)
        (s - offsetAtReference + slope * referenceLocal) / (1 + slope)
    }
}
