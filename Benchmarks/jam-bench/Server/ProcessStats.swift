import Foundation

/// A process's CPU time and memory as /proc tells them.
struct ProcessSample: Sendable {
    /// When the sample was taken (monotonic seconds).
    let at: Double
    /// User + system CPU time, seconds.
    let cpuSeconds: Double
    /// Resident memory now, MiB.
    let rssMiB: Double
    /// The highest resident memory so far, MiB.
    let peakRSSMiB: Double
    /// Threads.
    let threads: Int
    /// Major page faults so far (a page read back from disk: code or data the kernel had dropped).
    let majorFaults: Double

    /// Two processes' figures added up (several nodes as one service).
    static func + (a: ProcessSample, b: ProcessSample) -> ProcessSample {
        ProcessSample(
            at: max(a.at, b.at), cpuSeconds: a.cpuSeconds + b.cpuSeconds, rssMiB: a.rssMiB + b.rssMiB, peakRSSMiB: a.peakRSSMiB + b.peakRSSMiB,
            threads: a.threads + b.threads, majorFaults: a.majorFaults + b.majorFaults)
    }

    /// The PostgreSQL server processes on this machine together (its postmaster and every
    /// backend, by name), or nil when there are none.
    static func database() -> ProcessSample? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var total: ProcessSample?
        for entry in entries {
            guard let pid = Int32(entry), let name = try? ProcFile.read("/proc/\(pid)/comm"),
                name.trimmingCharacters(in: .whitespacesAndNewlines) == "postgres",
                let one = try? ProcFile.sample(pid: pid)
            else { continue }
            total = total.map { $0 + one } ?? one
        }
        return total
    }

    /// CPU use between `earlier` and this sample, in percent of one core.
    func cpuPercent(since earlier: ProcessSample) -> Double {
        let wall = at - earlier.at
        return wall > 0 ? (cpuSeconds - earlier.cpuSeconds) / wall * 100 : .nan
    }
}

/// Reads /proc files; a failure names the file, so a missing figure says why.
enum ProcFile {
    /// Failure to read a /proc file.
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The file's text.
    static func read(_ path: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ReadError(description: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// Samples process `pid`.
    static func sample(pid: Int32) throws -> ProcessSample {
        let now = MonoTime.seconds()
        let stat = try read("/proc/\(pid)/stat")
        // The command name may contain spaces; the fields after its closing parenthesis are fixed.
        guard let close = stat.lastIndex(of: ")") else { throw ReadError(description: "unexpected /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, majflt 12, utime 14 and stime 15 (1-based in proc(5)), i.e. indexes 9, 11 and 12 here.
        guard fields.count > 12, let utime = Double(fields[11]), let stime = Double(fields[12]), let majflt = Double(fields[9]) else {
            throw ReadError(description: "unexpected /proc/\(pid)/stat fields")
        }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let status = try read("/proc/\(pid)/status")
        /// A `/proc/<pid>/status` field in KiB.
        func kib(_ key: String) -> Double {
            status.split(separator: "\n").first { $0.hasPrefix(key) }
                .flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Double($0) } } ?? .nan
        }
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
            .flatMap { $0.split(separator: "\t").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } } ?? 0
        return ProcessSample(
            at: now, cpuSeconds: (utime + stime) / ticks, rssMiB: kib("VmRSS:") / 1024, peakRSSMiB: kib("VmHWM:") / 1024, threads: threads,
            majorFaults: majflt)
    }
}

/// CPU time of the whole machine, to tell how much other processes took during a run (this
/// machine is shared: builds and tests of other work can run beside a benchmark).
struct MachineCPU: Sendable {
    /// When the sample was taken (monotonic seconds).
    let at: Double
    /// Busy CPU seconds of all cores since boot.
    let busySeconds: Double
    /// CPU seconds the hypervisor ran something else while this machine's cores wanted to run
    /// ("steal"): on a virtual machine, the host's noise, which no process here can see.
    let stealSeconds: Double

    /// Reads /proc/stat.
    static func sample() throws -> MachineCPU {
        let now = MonoTime.seconds()
        let stat = try ProcFile.read("/proc/stat")
        guard let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else {
            throw ProcFile.ReadError(description: "no cpu line in /proc/stat")
        }
        // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard fields.count >= 8 else { throw ProcFile.ReadError(description: "unexpected /proc/stat cpu line") }
        let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        return MachineCPU(at: now, busySeconds: busy / tick, stealSeconds: fields[7] / tick)
    }

    /// CPU used by everything between `earlier` and this sample, % of one core.
    func percent(since earlier: MachineCPU) -> Double {
        let wall = at - earlier.at
        return wall > 0 ? (busySeconds - earlier.busySeconds) / wall * 100 : .nan
    }

    /// CPU time the host took from this machine between `earlier` and this sample, in ms
    /// (the kernel counts it in ticks, so 10 ms steps).
    func stealMs(since earlier: MachineCPU) -> Double {
        (stealSeconds - earlier.stealSeconds) * 1_000
    }
}
