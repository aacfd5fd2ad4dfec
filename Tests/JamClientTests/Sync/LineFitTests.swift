import JamProtocol
import Testing

@testable import JamClient

/// The envelopes a clock estimate is built from, kept on their hulls only.
@Suite("LineFit")
struct LineFitTests {
    /// A window's worth of ping samples: 40 ± 20 ms each way, 50 ppm of drift, some
    /// answered out of order and some sharing a send instant.
    static func samples(count: Int, seed: UInt64) -> [ClockSync.Sample] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            let t0 = Double(index / 3) * 61.5 + Double.random(in: 0..<3, using: &random).rounded()
            let offset = 1_234.5 + 0.05 * t0 / 1000
            let t1 = t0 + offset + 20 + Double.random(in: 0..<40, using: &random)
            let t2 = t1 + Double.random(in: 0..<0.2, using: &random)
            let t3 = t2 - offset + 20 + Double.random(in: 0..<40, using: &random)
            return ClockSync.Sample(t0: t0, t1: t1, t2: t2, t3: t3)
        }
    }

    @Test("the envelopes over the hulls equal the envelopes over every sample, at any slope")
    func hullsGiveTheSameEnvelopesAsEverySample() {
        for seed in UInt64(0)..<20 {
            let samples = Self.samples(count: 600, seed: seed)
            let r = samples.map(\.t3).max()!
            let fit = LineFit(samples: samples, reference: r)
            for step in -40...40 {
                let k = Double(step) * 0.000_01
                let upper = samples.map { ($0.t1 - $0.t0 - fit.base) - k * ($0.t0 - r) }.min()!
                let lower = samples.map { ($0.t2 - $0.t3 - fit.base) - k * ($0.t3 - r) }.max()!
                #expect(abs(fit.upper(k) - upper) <= 1e-9, "seed \(seed), slope \(k)")
                #expect(abs(fit.lower(k) - lower) <= 1e-9, "seed \(seed), slope \(k)")
            }
        }
    }

    @Test("a fit built from bursts' hulls equals the fit of all their samples")
    func burstHullsGiveTheSameFitAsTheirSamples() throws {
        for seed in UInt64(0)..<10 {
            let samples = Self.samples(count: 480, seed: seed + 100)
            // Bursts of 24 as ClockSync keeps them: answers in arrival order.
            var bursts: [ClockSync.Burst] = []
            for (index, sample) in samples.sorted(by: { $0.t3 < $1.t3 }).enumerated() {
                if index % 24 == 0 { bursts.append(ClockSync.Burst(id: index / 24, first: sample)) } else { bursts[bursts.count - 1].append(sample) }
            }
            let r = samples.map(\.t3).max()!
            let whole = LineFit(samples: bursts.flatMap(\.samples), reference: r)
            let merged = LineFit(bursts: bursts, reference: r)
            #expect(merged.base == whole.base)
            let slopes = try #require(merged.slopes(searchRange: 0.001, slack: 0.01))
            let expected = try #require(whole.slopes(searchRange: 0.001, slack: 0.01))
            #expect(slopes.widest == expected.widest && slopes.feasible == expected.feasible, "seed \(seed)")
            for step in -10...10 {
                let k = Double(step) * 0.000_01
                #expect(merged.upper(k) == whole.upper(k) && merged.lower(k) == whole.lower(k), "seed \(seed), slope \(k)")
            }
        }
    }

    @Test("a window of hundreds of samples keeps a few dozen hull points")
    func aWindowKeepsOnlyItsHullPoints() {
        let samples = Self.samples(count: 1_152, seed: 7)
        let below = LineFit.hull(samples.map(LineFit.Point.upper), keepingBelow: true)
        let above = LineFit.hull(samples.map(LineFit.Point.lower), keepingBelow: false)
        #expect(below.count >= 2 && below.count <= 60)
        #expect(above.count >= 2 && above.count <= 60)
        // Sorted by time, one point per instant.
        #expect(zip(below, below.dropFirst()).allSatisfy { $0.t < $1.t })
        #expect(zip(above, above.dropFirst()).allSatisfy { $0.t < $1.t })
    }

    @Test("points on one line are reduced to its two ends, and a single point is kept")
    func collinearPointsKeepTheirEnds() {
        let line = (0..<10).map { LineFit.Point(t: Double($0), v: 2 * Double($0) + 1) }
        #expect(LineFit.hull(line, keepingBelow: true).map(\.t) == [0, 9])
        #expect(LineFit.hull(line.reversed(), keepingBelow: false).map(\.t) == [0, 9])
        #expect(LineFit.hull([LineFit.Point(t: 5, v: 1)], keepingBelow: true) == [LineFit.Point(t: 5, v: 1)])
        // Two samples at one instant: the lower hull keeps the lower, the upper the higher.
        let twins = [LineFit.Point(t: 1, v: 4), LineFit.Point(t: 1, v: 2)]
        #expect(LineFit.hull(twins, keepingBelow: true).map(\.v) == [2])
        #expect(LineFit.hull(twins, keepingBelow: false).map(\.v) == [4])
        #expect(LineFit.hull(twins.reversed(), keepingBelow: false).map(\.v) == [4])
    }
}
