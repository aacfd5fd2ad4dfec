import Foundation

/// The lines `offset(t) = a + k·(t − r)` that pass below every sample's upper
/// constraint (`t1 − t0` at t0) and above every lower one (`t2 − t3` at t3).
/// Times are kept relative to the reference r and values relative to `base`.
struct LineFit {
    private let upperT: [Double]
    private let upperV: [Double]
    private let lowerT: [Double]
    private let lowerV: [Double]
    /// Subtracted from every value (keeps the arithmetic near zero).
    let base: Double
    static let iterations = 40

    /// A constraint's instant and value: (t0, t1 − t0) for an upper one, (t3, t2 − t3) for a lower one.
    struct Point: Sendable, Equatable {
        var t: Double
        var v: Double

        /// The upper constraint of `sample`: the offset at t0 is at most t1 − t0.
        static func upper(_ sample: ClockSync.Sample) -> Point { Point(t: sample.t0, v: sample.t1 - sample.t0) }
        /// The lower constraint of `sample`: the offset at t3 is at least t2 − t3.
        static func lower(_ sample: ClockSync.Sample) -> Point { Point(t: sample.t3, v: sample.t2 - sample.t3) }
    }

    /// The fit of every constraint of `samples`.
    init(samples: [ClockSync.Sample], reference r: Double, base: Double? = nil) {
        self.init(
            upper: Self.hull(samples.map(Point.upper), keepingBelow: true),
            lower: Self.hull(samples.map(Point.lower), keepingBelow: false),
            reference: r, base: base ?? samples.first.map { $0.t1 - $0.t0 } ?? 0)
    }

    /// The fit of every constraint of `bursts`, from their hulls: the hull of a union is the
    /// hull of its parts' hulls, so this equals `init(samples:)` over all their samples.
    init(bursts: some Collection<ClockSync.Burst>, reference r: Double, base: Double? = nil) {
        self.init(
            upper: Self.hull(bursts.flatMap(\.upperHull), keepingBelow: true),
            lower: Self.hull(bursts.flatMap(\.lowerHull), keepingBelow: false),
            reference: r, base: base ?? bursts.first.map { $0.samples[0].t1 - $0.samples[0].t0 } ?? 0)
    }

    /// Only the points on a hull can be the min (upper) or max (lower) for some slope, so a
    /// search costs a few dozen points, not the window's thousand samples, and finds
    /// exactly what the whole set would give.
    private init(upper: [Point], lower: [Point], reference r: Double, base b: Double) {
        self.base = b
        upperT = upper.map { $0.t - r }
        upperV = upper.map { $0.v - b }
        lowerT = lower.map { $0.t - r }
        lowerV = lower.map { $0.v - b }
    }

    /// The lower (`keepingBelow`) or upper convex hull of `points` by Andrew's monotone
    /// chain, sorted by t: the points that attain the min (or max) of `v − k·t` for some k.
    static func hull(_ points: [Point], keepingBelow below: Bool) -> [Point] {
        var sorted = points
        // A burst's answers and the bursts come nearly in order: sort only when they are not.
        var index = 1
        while index < points.count, points[index - 1].t <= points[index].t { index += 1 }
        if index < points.count { sorted.sort { $0.t < $1.t } }
        var chain: [Point] = []
        chain.reserveCapacity(min(sorted.count, 64))
        for point in sorted {
            if let last = chain.last, last.t == point.t {
                // One point per instant: the lower (or higher) of the two.
                if below ? point.v >= last.v : point.v <= last.v { continue }
                chain.removeLast()
            }
            // Pop the last point while it does not bend the chain the hull's way.
            while chain.count >= 2 {
                let a = chain[chain.count - 2], b = chain[chain.count - 1]
                let cross = (b.t - a.t) * (point.v - a.v) - (b.v - a.v) * (point.t - a.t)
                guard below ? cross <= 0 : cross >= 0 else { break }
                chain.removeLast()
            }
            chain.append(point)
        }
        return chain
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
