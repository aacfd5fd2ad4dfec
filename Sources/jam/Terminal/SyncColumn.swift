import JamProtocol

/// The host's sync column in the terminal: one line per reporting device, a coloured dot
/// for its grade and its figures, the selected one marked.
enum SyncColumn {
    /// Lines for `board` (none when there is nothing to show).
    static func lines(_ board: SyncStatusUpdate?, members: [Member], selection: Int) -> [String] {
        guard let devices = board?.devices, !devices.isEmpty else { return [] }
        var lines = ["Sync ([ ] choose · < > delay ∓5 ms · r re-sync · c calibrate, this one listening)"]
        for (index, device) in devices.enumerated() {
            let name = members.first { $0.userId == device.userId }?.displayName ?? "someone who left"
            let marker = index == selection ? "›" : " "
            lines.append("\(marker) \(dot(device.grade)) \(name) · \(device.deviceId ?? "no device id")  \(figures(device))")
        }
        return lines
    }

    /// "good  delay +0 ms  clock ±0.8 ms  playback +1.5 ms  output 40 ms", what the column says
    /// of one device: first what the host's keys change and what keeps a device out of step,
    /// then the measures, which a narrow terminal cuts first.
    static func figures(_ device: DeviceSyncStatus) -> String {
        var parts = [device.grade.rawValue, "delay \(signed(device.delayMs ?? 0)) ms"]
        if !device.playing { parts.append("not playing") }
        if device.canListen == false { parts.append("cannot listen (no microphone it may use)") }
        if device.ageMs > SyncGrade.staleMs { parts.append("last heard \(format(device.ageMs / 1000)) s ago") }
        parts.append("clock ±\(format(device.clockErrorMs)) ms")
        parts.append("playback \(signed(device.playbackErrorMs)) ms")
        if let latency = device.outputLatencyMs { parts.append("output \(format(latency)) ms") }
        return parts.joined(separator: "  ")
    }

    /// Green, amber or red.
    static func dot(_ grade: SyncGrade) -> String {
        let colour: TerminalText.Colour = switch grade {
        case .good: .green
        case .fair: .amber
        case .poor: .red
        }
        return colour.paint("●")
    }

    private static func format(_ value: Double) -> String {
        guard abs(value) >= 10 else { return String((value * 10).rounded() / 10) }
        // A figure too large for a whole number (a server before the report's bounds) shows as
        // it is rather than stopping the program.
        return Int(exactly: value.rounded()).map(String.init) ?? String(value)
    }

    private static func signed(_ value: Double) -> String {
        (value >= 0 ? "+" : "−") + format(abs(value))
    }
}
