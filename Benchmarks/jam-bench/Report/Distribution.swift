import Histogram

/// Measurements of one quantity in milliseconds, kept in an HDR histogram at microsecond
/// resolution (3 significant digits, up to an hour), plus the signed mean so a bias shows
/// even where the histogram holds magnitudes.
struct Distribution: Sendable {
    private var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    private var signedSum = 0.0
    /// Values that were not finite (a broken measurement, never a slow one).
    private(set) var invalid = 0

    /// Creates an empty distribution.
    init() {}

    /// Records one value; negative values count by their magnitude, and their sign goes into `mean`.
    mutating func record(_ ms: Double) {
        guard ms.isFinite else {
            invalid += 1
            return
        }
        signedSum += ms
        // Values past an hour are clamped rather than lost, so they still count.
        histogram.record(min(UInt64((abs(ms) * 1000).rounded()), 3_600_000_000))
    }

    /// Adds every value of `other`.
    mutating func merge(_ other: Distribution) {
        histogram.add(other.histogram)
        signedSum += other.signedSum
        invalid += other.invalid
    }

    /// How many values were recorded.
    var count: Int { Int(histogram.totalCount) }

    /// The value at percentile `p` (0–100) of the magnitudes, in ms.
    func percentile(_ p: Double) -> Double {
        count == 0 ? .nan : Double(histogram.valueAtPercentile(p)) / 1000
    }

    /// The median magnitude, in ms.
    var median: Double { percentile(50) }
    /// The 99th percentile of the magnitudes, in ms.
    var p99: Double { percentile(99) }
    /// The 99.9th percentile of the magnitudes, in ms.
    var p999: Double { percentile(99.9) }
    /// The largest magnitude, in ms.
    var max: Double { count == 0 ? .nan : Double(histogram.max) / 1000 }
    /// The mean of the signed values, in ms (a bias).
    var mean: Double { count == 0 ? .nan : signedSum / Double(count) }
}
