import Foundation

/// One read of a server's `/metrics` (Prometheus' text format), so the figures a phase compares
/// before and after all come from the same instant.
struct MetricsScrape: Sendable {
    /// Each sample's value, keyed by its name with its labels exactly as the server wrote them.
    private let samples: [String: Double]

    /// Parses the exposition text; comment lines and lines without a number are skipped.
    init(text: String) {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            // Label values may hold spaces, so the key ends at the closing brace when there is one.
            let keyEnd = line.firstIndex(of: "}").map { line.index(after: $0) } ?? line.firstIndex(of: " ") ?? line.endIndex
            let rest = line[keyEnd...].split(separator: " ")
            guard let first = rest.first, let value = Double(first) else { continue }
            samples[String(line[..<keyEnd])] = value
        }
        self.samples = samples
    }

    /// An unlabelled sample (a counter or gauge), nil when the server does not export it.
    func value(_ name: String) -> Double? { samples[name] }

    /// A histogram's cumulative bucket counts, ascending by bound (the last one `+Inf`); nil when
    /// the server does not export it.
    func histogram(_ name: String) -> HistogramCounts? {
        let prefix = name + "_bucket{le=\""
        var buckets: [HistogramCounts.Bucket] = []
        for (key, count) in samples where key.hasPrefix(prefix) && key.hasSuffix("\"}") {
            let bound = key.dropFirst(prefix.count).dropLast(2)
            guard let upper = bound == "+Inf" ? Double.infinity : Double(bound) else { continue }
            buckets.append(.init(upperBound: upper, count: count))
        }
        guard !buckets.isEmpty, let sum = samples[name + "_sum"] else { return nil }
        return HistogramCounts(buckets: buckets.sorted { $0.upperBound < $1.upperBound }, sum: sum)
    }
}

/// A Prometheus histogram's cumulative counts, or the difference of two reads of one.
struct HistogramCounts: Sendable {
    /// How many observations were at most `upperBound`.
    struct Bucket: Sendable {
        let upperBound: Double
        let count: Double
    }

    /// Ascending by bound; the last is `+Inf` and holds every observation.
    let buckets: [Bucket]
    /// The observations added up.
    let sum: Double

    /// Every observation.
    var count: Double { buckets.last?.count ?? 0 }
    /// The mean observation; nil without any.
    var mean: Double? { count > 0 ? sum / count : nil }

    /// Observations above `bound` (which should be one of the buckets' bounds).
    func count(above bound: Double) -> Double {
        count - (buckets.last { $0.upperBound <= bound }?.count ?? 0)
    }

    /// The smallest bound the slowest observation stayed within (`+Inf` past the last finite
    /// bound); nil without observations.
    var slowestWithin: Double? {
        guard count > 0 else { return nil }
        return buckets.first { $0.count >= count }?.upperBound
    }

    /// The observations made between `earlier` and this read (same buckets).
    func since(_ earlier: HistogramCounts) -> HistogramCounts {
        HistogramCounts(buckets: zip(buckets, earlier.buckets).map { .init(upperBound: $0.upperBound, count: $0.count - $1.count) }, sum: sum - earlier.sum)
    }
}
