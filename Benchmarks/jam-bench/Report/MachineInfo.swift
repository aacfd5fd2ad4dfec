import Foundation

/// The machine a run measured on, read from /proc, so figures are never quoted without it.
struct MachineInfo: Sendable {
    /// Online CPUs.
    let cores: Int
    /// The CPU model from /proc/cpuinfo.
    let cpuModel: String
    /// Total memory, GiB.
    let memoryGiB: Double
    /// The kernel release.
    let kernel: String

    /// Reads the current machine.
    static func current() -> MachineInfo {
        let cpuinfo = text("/proc/cpuinfo")
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = text("/proc/meminfo")
        let totalKiB = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Double($0) } } ?? 0
        let kernel = text("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines)
        return MachineInfo(
            cores: ProcessInfo.processInfo.activeProcessorCount, cpuModel: model, memoryGiB: totalKiB / 1_048_576, kernel: kernel)
    }

    /// A /proc file's text; an unreadable one says so in the description instead of failing the run.
    private static func text(_ path: String) -> String {
        do {
            return try ProcFile.read(path)
        } catch {
            return "unknown (\(error))"
        }
    }

    /// One line for the table header.
    var summary: String {
        String(format: "%d cores · %@ · %.1f GiB · Linux %@", cores, cpuModel, memoryGiB, kernel)
    }

    /// The JSON form.
    var json: [String: Any] {
        ["cores": cores, "cpu": cpuModel, "memoryGiB": (memoryGiB * 10).rounded() / 10, "kernel": kernel]
    }
}
