import Foundation

extension ClockSync {
    /// One exchange: local send t0, server receive t1, server send t2, local receive t3.
    struct Sample: Sendable {
        var t0: Double, t1: Double, t2: Double, t3: Double
        var delay: Double { (t3 - t0) - (t2 - t1) }
    }

    /// The answered pings of one burst, with what the estimate reads of them kept at hand:
    /// each pong changes one burst, so the others' figures are not worked out again.
    struct Burst: Sendable {
        let id: Int
        private(set) var samples: [Sample]
        /// When the burst's first answered ping left.
        private(set) var start: Double = .infinity
        /// When its newest answer arrived.
        private(set) var newest: Double = -.infinity
        /// Its lowest-delay sample (the first of equals).
        private(set) var best: Sample
        /// The upper constraints (t0, t1 − t0) on their lower hull and the lower ones
        /// (t3, t2 − t3) on their upper hull: the only ones a `LineFit` can find binding.
        private(set) var upperHull: [LineFit.Point] = []
        private(set) var lowerHull: [LineFit.Point] = []

        /// A burst whose first answer is `sample`.
        init(id: Int, first sample: Sample) {
            self.id = id
            self.samples = [sample]
            self.best = sample
            refresh()
        }

        /// Adds an answer.
        mutating func append(_ sample: Sample) {
            samples.append(sample)
            refresh()
        }

        /// Keeps only the lowest-delay sample (the burst contradicts itself).
        mutating func keepOnlyBest() {
            samples = [best]
            refresh()
        }

        private mutating func refresh() {
            start = samples.lazy.map(\.t0).min() ?? .infinity
            newest = samples.lazy.map(\.t3).max() ?? -.infinity
            best = samples.min { $0.delay < $1.delay } ?? best
            upperHull = LineFit.hull(samples.map(LineFit.Point.upper), keepingBelow: true)
            lowerHull = LineFit.hull(samples.map(LineFit.Point.lower), keepingBelow: false)
        }
    }
}
