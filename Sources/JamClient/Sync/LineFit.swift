import Foundation

/// The lines `offset(t) = a + k·(t − r)` that pass below every sample's upper
/// constraint (`t1 − t0` at t0) and above every lower one (`t2 − t3` at t3).
/// Times are kept relative to the reference r and values relative to `base`.
struct LineFit {
    private var upperT: [Double] = []
    private var upperV: [Double] = []
    private var lowerT: [Double] = []
    private var lowerV: [Double] = []
    /// Subtracted from every value (keeps the arithmetic near zero).
    let base: Double
    static let iterations = 40

    init(samples: [ClockSync.Sample], reference r: Double, base: Double? = nil) {
        let b = base ?? samples.first.map { $0.t1 - $0.t0 } ?? 0
        self.base = b
        upperT.reserveCapacity(samples.count)
        upperV.reserveCapacity(samples.count)
        lowerT.reserveCapacity(samples.count)
        lowerV.reserveCapacity(samples.count)
        for sample in samples {
            upperT.append(sample.t0 - r)
            upperV.append((sample.t1 - sample.t0) - b)
            lowerT.append(sample.t3 - r)
            lowerV.append((sample.t2 - sample.t3) - b)
        }
    }

    /// min over i of (v_i − k·t_i).
    private static func envelopeMin(_ t: [Double], _ v: [Double], _ k: Double) -> Double {
        var value = Double.infinity
        for index in t.indices {
            let candidate = v[index] - k * t[index]
            if candidate < value { value = candidate }
        }
        return value
    }

    /// max over i of (v_i − k·t_i).
    private static func envelopeMax(_ t: [Double], _ v: [Double], _ k: Double) -> Double {
        var value = -Double.infinity
        for index in t.indices {
            let candidate = v[index] - k * t[index]
            if candidate > value { value = candidate }
        }
        return value
    }

    /// The highest offset at r a line of slope k may have (concave in k).
    func upper(_ k: Double) -> Double { Self.envelopeMin(upperT, upperV, k) }

    /// The lowest offset at r a line of slope k may have (convex in k).
    func lower(_ k: Double) -> Double { Self.envelopeMax(lowerT, lowerV, k) }

    /// The slopes a line satisfying every constraint may have, and the one that leaves the most room.
    struct Slopes {
        /// The slopes for which some line satisfies every constraint (within the slack).
        let feasible: ClosedRange<Double>
        /// The drift as the one slope both delay floors share: the slope at which the upper
        /// and lower constraints leave the most room between them, i.e. the highest floor
        /// under the upper constraints and the lowest over the lower ones, fitted together
        /// (linear programming on the lowest delays of both directions). Fitting each floor on
        /// its own and averaging the two slopes was 20–30 % further off (docs/PERFORMANCE.md).
        let widest: Double
    }

    /// The feasible slopes (within `slack`) and the widest one; nil when no line fits.
    func slopes(searchRange: Double, slack: Double) -> Slopes? {
        guard !upperT.isEmpty else { return nil }
        let room: (Double) -> Double = { upper($0) - lower($0) } // concave
        let best = Self.argmax(room, in: -searchRange...searchRange)
        guard room(best) >= -slack else { return nil }
        let ok: (Double) -> Bool = { room($0) >= -slack }
        let low = ok(-searchRange) ? -searchRange : Self.boundary(inside: best, outside: -searchRange, ok)
        let high = ok(searchRange) ? searchRange : Self.boundary(inside: best, outside: searchRange, ok)
        return Slopes(feasible: low...high, widest: best)
    }

    /// The lowest and highest offset at r of any line with a slope in `slopes`.
    func offsetRange(slopes: ClosedRange<Double>) -> (Double, Double) {
        let highest = upper(Self.argmax(upper, in: slopes))
        let lowest = lower(Self.argmax({ -lower($0) }, in: slopes))
        return (lowest, highest)
    }

    /// Golden-section search for the maximum of a concave function.
    static func argmax(_ f: (Double) -> Double, in range: ClosedRange<Double>) -> Double {
        let ratio = (5.0.squareRoot() - 1) / 2
        var a = range.lowerBound, b = range.upperBound
        guard b > a else { return a }
        var c = b - ratio * (b - a), d = a + ratio * (b - a)
        var fc = f(c), fd = f(d)
        for _ in 0..<iterations {
            if fc >= fd {
                b = d
                d = c
                fd = fc
                c = b - ratio * (b - a)
                fc = f(c)
            } else {
                a = c
                c = d
                fc = fd
                d = a + ratio * (b - a)
                fd = f(d)
            }
        }
        return [range.lowerBound, range.upperBound, (a + b) / 2].max { f($0) < f($1) }!
    }

    /// Bisection for the edge between a feasible and an infeasible point.
    static func boundary(inside: Double, outside: Double, _ feasible: (Double) -> Bool) -> Double {
        var good = inside, bad = outside
        for _ in 0..<iterations {
            let mid = (good + bad) / 2
            if feasible(mid) { good = mid } else { bad = mid }
        }
        return good
    }
}
