import Foundation

/// CPU use of the server, the benchmark and everything else over a stretch of a run.
struct CPUUsage: Sendable {
    let server: ServerUnderTest
    let serverBefore: ProcessSample?
    let selfBefore: ProcessSample?
    let machineBefore: MachineCPU?

    /// Samples the three now.
    static func start(server: ServerUnderTest) -> CPUUsage {
        CPUUsage(server: server, serverBefore: server.sample(), selfBefore: selfSample(), machineBefore: machineSample())
    }

    /// Adds server, benchmark and other processes' CPU since the start to `report`.
    func report(into report: inout Report, prefix: String) {
        guard let serverBefore, let selfBefore, let machineBefore, let serverAfter = server.sample(), let selfAfter = Self.selfSample(),
              let machineAfter = Self.machineSample()
        else { return }
        let serverCPU = serverAfter.cpuPercent(since: serverBefore)
        let selfCPU = selfAfter.cpuPercent(since: selfBefore)
        report.add(.value("\(prefix)_server_cpu_percent", "\(prefix): server CPU", serverCPU, unit: "% of a core"))
        report.add(.value("\(prefix)_client_cpu_percent", "\(prefix): benchmark (clients, proxies) CPU", selfCPU, unit: "% of a core"))
        report.add(.value(
            "\(prefix)_others_cpu_percent", "\(prefix): other processes' CPU (noise)", max(0, machineAfter.percent(since: machineBefore) - serverCPU - selfCPU),
            unit: "% of a core"))
    }

    /// This process's CPU and memory.
    static func selfSample() -> ProcessSample? {
        do {
            return try ProcFile.sample(pid: getpid())
        } catch {
            return nil
        }
    }

    /// The machine's CPU time.
    static func machineSample() -> MachineCPU? {
        do {
            return try MachineCPU.sample()
        } catch {
            return nil
        }
    }
}
