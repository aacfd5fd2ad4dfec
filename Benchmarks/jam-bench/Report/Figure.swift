import Foundation

/// One reported figure: a distribution (latencies, errors) or a single value (a rate, a size).
struct Figure: Sendable {
    /// The measured content.
    enum Content: Sendable {
        /// Milliseconds, reported as median, p99 and max.
        case distribution(Distribution)
        /// A single number in `unit`.
        case value(Double, unit: String)
    }

    /// The key in the JSON line, e.g. `offset_error_ms`.
    let key: String
    /// What a reader sees in the table.
    let label: String
    let content: Content
    /// The targets the project set for this figure (none for most).
    var targets: [Target]

    /// A distribution figure.
    static func distribution(_ key: String, _ label: String, _ distribution: Distribution, target: Target? = nil, targets: [Target] = []) -> Figure {
        Figure(key: key, label: label, content: .distribution(distribution), targets: (target.map { [$0] } ?? []) + targets)
    }

    /// A single-value figure.
    static func value(_ key: String, _ label: String, _ value: Double, unit: String, target: Target? = nil) -> Figure {
        Figure(key: key, label: label, content: .value(value, unit: unit), targets: target.map { [$0] } ?? [])
    }

    /// True when the figure holds a measurement (a distribution with values, a finite number).
    var isPresent: Bool {
        switch content {
        case .distribution(let d): d.count > 0 && d.invalid == 0
        case .value(let v, _): v.isFinite
        }
    }

    /// Whether every target is met; nil without targets or a measurement.
    var meetsTarget: Bool? {
        guard !targets.isEmpty, isPresent else { return nil }
        return targets.allSatisfy { $0.isMet(by: self) }
    }
}

/// A goal for a figure: one statistic compared with a bound.
struct Target: Sendable {
    /// Which number of the figure is compared.
    enum Statistic: String, Sendable {
        case median = "p50"
        case p99
        case max
        case value
    }

    let statistic: Statistic
    /// True: the statistic must be at most `bound`; false: at least.
    let atMost: Bool
    let bound: Double
    /// The wording in the table, e.g. "≤ 2 ms p99".
    let text: String

    /// At most `bound` for `statistic`.
    static func atMost(_ bound: Double, _ statistic: Statistic, _ text: String) -> Target {
        Target(statistic: statistic, atMost: true, bound: bound, text: text)
    }

    /// At least `bound` for `statistic`.
    static func atLeast(_ bound: Double, _ statistic: Statistic, _ text: String) -> Target {
        Target(statistic: statistic, atMost: false, bound: bound, text: text)
    }

    /// Compares the figure's statistic with the bound.
    func isMet(by figure: Figure) -> Bool {
        let measured: Double
        switch (figure.content, statistic) {
        case (.distribution(let d), .median): measured = d.median
        case (.distribution(let d), .p99): measured = d.p99
        case (.distribution(let d), .max), (.distribution(let d), .value): measured = d.max
        case (.value(let v, _), _): measured = v
        }
        return atMost ? measured <= bound : measured >= bound
    }
}
