import Foundation

/// What one run found: its settings, figures, notes and correctness failures, printed as a
/// table for people and as one JSON line for tracking.
struct Report: Sendable {
    /// The subcommand, e.g. `sync`.
    let bench: String
    /// How it ran, in the order given (protocol, sizes, build).
    var settings: [(String, String)] = []
    var figures: [Figure] = []
    /// Context a reader needs next to the figures (what limits them, caveats).
    var notes: [String] = []
    /// Broken behaviour (a lost event, a device that never started, a missing figure).
    /// Any failure makes the run exit non-zero, whatever the figures say.
    var failures: [String] = []

    /// Creates an empty report for `bench`.
    init(bench: String) {
        self.bench = bench
    }

    /// Adds a setting shown in the header and the JSON line.
    mutating func set(_ key: String, _ value: String) {
        settings.append((key, value))
    }

    /// Adds a figure; a figure without a measurement is a failure unless `optional`.
    mutating func add(_ figure: Figure, optional: Bool = false) {
        figures.append(figure)
        if !figure.isPresent && !optional { failures.append("no measurement for \(figure.label)") }
    }

    /// Records broken behaviour.
    mutating func fail(_ message: String) {
        failures.append(message)
    }

    /// Adds a note.
    mutating func note(_ text: String) {
        notes.append(text)
    }

    /// Targets this run missed.
    var missedTargets: [Figure] { figures.filter { $0.meetsTarget == false } }

    /// Prints the table, the notes, the failures and the JSON line.
    func print(machine: MachineInfo) {
        var out = "\n== jam-bench \(bench) · " + settings.map { "\($0.0) \($0.1)" }.joined(separator: " · ") + "\n"
        out += "   machine: \(machine.summary)\n"
        let width = max(44, (figures.map(\.label.count).max() ?? 0) + 2)
        for figure in figures {
            out += "  " + figure.label.padding(toLength: width, withPad: " ", startingAt: 0)
            out += Self.describe(figure)
            for target in figure.targets {
                let verdict = figure.isPresent ? (target.isMet(by: figure) ? "PASS" : "MISS") : "n/a"
                out += "   target \(target.text): \(verdict)"
            }
            out += "\n"
        }
        for note in notes { out += "  note: \(note)\n" }
        for failure in failures { out += "  FAILED: \(failure)\n" }
        out += jsonLine(machine: machine) + "\n"
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    /// The figure's numbers as one table cell.
    static func describe(_ figure: Figure) -> String {
        switch figure.content {
        case .distribution(let d):
            guard d.count > 0 else { return "no values" }
            return "p50 \(ms(d.median))  p99 \(ms(d.p99))  max \(ms(d.max))  mean \(ms(d.mean))  n=\(d.count)"
        case .value(let v, let unit):
            return "\(number(v)) \(unit)"
        }
    }

    /// Milliseconds with a precision that suits their size.
    static func ms(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let magnitude = abs(value)
        let digits = magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0
        return String(format: "%.\(digits)f ms", value)
    }

    /// A number with a precision that suits its size.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        let magnitude = abs(value)
        return String(format: magnitude < 10 ? "%.3f" : magnitude < 1000 ? "%.1f" : "%.0f", value)
    }

    /// One JSON object on one line: bench, time, settings, machine, figures, targets, failures.
    func jsonLine(machine: MachineInfo) -> String {
        var object: [String: Any] = [
            "bench": bench,
            "time": ISO8601DateFormatter().string(from: Date()),
            "machine": machine.json,
            "ok": failures.isEmpty,
            "failures": failures,
        ]
        object["settings"] = Dictionary(settings, uniquingKeysWith: { _, last in last })
        var figureObjects: [String: Any] = [:]
        for figure in figures {
            var entry: [String: Any] = [:]
            switch figure.content {
            case .distribution(let d):
                entry = ["n": d.count, "p50": Self.rounded(d.median), "p99": Self.rounded(d.p99), "max": Self.rounded(d.max), "mean": Self.rounded(d.mean), "unit": "ms"]
            case .value(let v, let unit):
                entry = ["value": Self.rounded(v), "unit": unit]
            }
            if !figure.targets.isEmpty {
                entry["target"] = figure.targets.map(\.text).joined(separator: ", ")
                entry["met"] = figure.meetsTarget.map { $0 as Any } ?? NSNull()
            }
            figureObjects[figure.key] = entry
        }
        object["figures"] = figureObjects
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        } catch {
            return "{\"bench\":\"\(bench)\",\"ok\":false,\"failures\":[\"the report did not encode: \(error)\"]}"
        }
    }

    /// JSON cannot carry NaN: a missing number is null.
    private static func rounded(_ value: Double) -> Any {
        guard value.isFinite else { return NSNull() }
        return (value * 1000).rounded() / 1000
    }
}
