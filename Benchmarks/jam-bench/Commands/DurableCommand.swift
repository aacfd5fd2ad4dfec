import ArgumentParser
import Foundation

/// `jam-bench durable`: acknowledged (durable) commands per second with SQLite.
struct DurableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "durable",
        abstract: "Acknowledged commands per second with the SQLite store: one client, then many at once.",
        discussion: """
            OpenJam acknowledges a command only once the SQLite transaction holding it has
            committed (WAL, synchronous=FULL), so the acknowledged rate is bounded by the disk's
            flushes and by how many commands each group commit carries. Each client keeps one
            vote in flight (closed loop): the next goes when the ack of the last arrives. The
            disk's own fsync latency is measured first, as the floor of one commit. Phases: one
            client alone; --clients clients each in a session of its own (durability, no fan-out);
            the same clients in --sessions sessions (each vote also goes to the other members).
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Clients in the concurrent phase.")
    var clients: Int = 100

    @Option(help: "Sessions the concurrent clients are spread over.")
    var sessions: Int = 10

    @Option(help: "Seconds per phase.")
    var seconds: Double = 10

    /// Runs both phases and prints the report.
    func run() async throws {
        let smoke = common.smoke
        let clientCount = smoke ? 4 : max(1, min(clients, 2_000))
        let sessionCount = max(1, min(smoke ? 2 : sessions, clientCount))
        let phaseSeconds = smoke ? 1 : max(1, min(seconds, 30))
        try await common.awaitQuietMachine()
        var report = Report(bench: "durable")
        report.set("clients", "1; \(clientCount) in sessions of their own; \(clientCount) in \(sessionCount) sessions")
        report.set("phase", "\(Report.number(phaseSeconds)) s each, one vote in flight per client")

        let fsync = try DiskProbe.fsyncLatency(directory: FileManager.default.temporaryDirectory, seconds: smoke ? 0.3 : 2)
        report.addDisk(fsync)

        let (server, jam) = try await common.startServer(.openjam)
        report.describe(server: server, jam: jam, wire: .openjam)
        do {
            let rest = OpenJamREST(http: LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port))
            let perSession = max(1, clientCount / sessionCount)
            // Alone: the latency of one durable command. Own sessions: durability with nobody to
            // fan out to. Shared sessions: every vote also goes to the session's other members.
            let plans: [(key: String, label: String, sessions: Int, members: Int, target: Bool)] = [
                ("one_client", "1 client", 1, 1, false),
                ("own_sessions", "\(clientCount) clients, own sessions", clientCount, 1, true),
                ("shared_sessions", "\(sessionCount * perSession) clients in \(sessionCount) sessions", sessionCount, perSession, true),
            ]
            for (index, plan) in plans.enumerated() {
                Console.line("durable: \(plan.label)…")
                let room = try await LoadRoom.openjam(
                    server: server, sessions: plan.sessions, members: plan.members, votable: 4, voteShare: 1, seed: common.seed &+ UInt64(index))
                let run = try await measured(room, plan.label, seconds: phaseSeconds, server: server, rest: rest)
                await room.close()
                let phase = run.phase
                report.add(.value(
                    "\(plan.key)_commands_per_s", "\(plan.label): acknowledged commands/s", phase.answeredRate, unit: "/s",
                    target: plan.key == "own_sessions" ? .atLeast(20_000, .value, "≥ 20,000/s") : nil))
                report.add(.distribution("\(plan.key)_ack_ms", "\(plan.label): command → ack", phase.ack))
                report.add(.value("\(plan.key)_commits_per_s", "\(plan.label): commits/s", run.batchesPerSecond, unit: "/s"), optional: true)
                report.add(.value("\(plan.key)_commands_per_commit", "\(plan.label): commands per commit", run.perBatch, unit: "commands"), optional: true)
                if plan.members > 1 {
                    report.add(.value("\(plan.key)_deliveries_per_s", "\(plan.label): events delivered to members/s", phase.deliveryRate, unit: "/s"))
                }
                if let cpu = phase.serverCPU { report.add(.value("\(plan.key)_server_cpu_percent", "\(plan.label): server CPU", cpu, unit: "% of a core")) }
                if let cpu = phase.clientCPU { report.add(.value("\(plan.key)_client_cpu_percent", "\(plan.label): load client CPU", cpu, unit: "% of a core")) }
                if let cpu = phase.othersCPU { report.add(.value("\(plan.key)_others_cpu_percent", "\(plan.label): other processes' CPU (noise)", cpu, unit: "% of a core")) }
                if phase.answered == 0 { report.fail("\(plan.label): no command was acknowledged") }
                if !phase.errors.isEmpty { report.fail("\(plan.label): \(phase.errors.count) commands refused, e.g. \(phase.errors[0])") }
                if phase.unanswered > 0 { report.fail("\(plan.label): \(phase.unanswered) commands never acknowledged") }
                if phase.lost + phase.duplicated > 0 { report.fail("\(plan.label): \(phase.lost) events lost, \(phase.duplicated) duplicated") }
                if !phase.closed.isEmpty { report.fail("\(plan.label): sockets closed, e.g. \(phase.closed[0])") }
            }
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.stop(keepData: common.keepData)
        try common.finish(report)
    }

    /// A closed-loop phase with the store's commit count from `/metrics` around it.
    private func measured(
        _ room: LoadRoom, _ name: String, seconds: Double, server: ServerUnderTest, rest: OpenJamREST
    ) async throws -> (phase: PhaseResult, perBatch: Double, batchesPerSecond: Double) {
        let before = try await rest.metric("openjam_store_batches_total")
        let phase = try await room.runPhase(name, rate: 0, seconds: seconds, closedLoop: true, server: server)
        let after = try await rest.metric("openjam_store_batches_total")
        Console.line(phase.summary + String(format: " · %.0f acknowledged/s", phase.answeredRate))
        guard let before, let after, after > before else { return (phase, .nan, .nan) }
        // Commits in the window also carry the drain's and the phase set-up's few writes: a close estimate.
        return (phase, Double(phase.answered) / (after - before), (after - before) / seconds)
    }
}

/// Measures the disk under the server's data folder.
enum DiskProbe {
    /// Latency of writing 4 KiB and fsync-ing it, repeated for `seconds`.
    static func fsyncLatency(directory: URL, seconds: Double) throws -> Distribution {
        let file = try SyncedBlockFile(in: directory)
        var latency = Distribution()
        let end = MonoTime.seconds() + seconds
        while MonoTime.seconds() < end { latency.record(try file.writeAndSync()) }
        return latency
    }

    /// Latency of writing 4 KiB and fsync-ing it after `pauseMilliseconds` without I/O, `count` times: what
    /// the commit of a command on an otherwise idle server waits for. On a virtual machine it
    /// takes several times the back-to-back figure, as the host and the halted CPU wake up for it.
    static func pausedFsyncLatency(directory: URL, pauseMilliseconds: Int, count: Int) throws -> Distribution {
        let file = try SyncedBlockFile(in: directory)
        var latency = Distribution()
        _ = try file.writeAndSync()
        for _ in 0..<count {
            Thread.sleep(forTimeInterval: Double(pauseMilliseconds) / 1000)
            latency.record(try file.writeAndSync())
        }
        return latency
    }
}

/// A scratch file whose first 4 KiB block is written over and fsynced, as a commit does. Its name
/// is removed as soon as it is open, so nothing is left behind even by a killed process. Used by
/// one thread at a time.
final class SyncedBlockFile {
    private let fd: Int32

    /// A new file in `directory`, named for this process and `name`.
    init(in directory: URL, name: String = "fsync") throws {
        let path = directory.appendingPathComponent("jam-bench-\(name)-\(getpid())").path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw ChildProcess.Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
        unlink(path)
    }

    deinit {
        close(fd)
    }

    /// Writes one 4 KiB block over the file's first and fsyncs it; returns the milliseconds taken.
    func writeAndSync() throws -> Double {
        let start = MonoTime.nanos()
        let written = Self.block.withUnsafeBytes { pwrite(fd, $0.baseAddress, 4096, 0) }
        guard written == 4096, fsync(fd) == 0 else { throw ChildProcess.Failure(description: "write/fsync failed: \(String(cString: strerror(errno)))") }
        return Double(MonoTime.nanos() - start) / 1_000_000
    }

    private static let block = [UInt8](repeating: 7, count: 4096)
}

extension Report {
    /// The disk's own write + fsync latency, its tail included: the floor of every commit and
    /// the source of its stalls, reported beside the server's figures.
    mutating func addDisk(_ fsync: Distribution) {
        add(.distribution("disk_fsync_ms", "disk: write 4 KiB + fsync (the floor of one commit)", fsync))
        add(.value("disk_fsync_p999_ms", "disk: write 4 KiB + fsync, p99.9", fsync.p999, unit: "ms"))
    }

    /// The same after a pause as long as the idle phase's between commands: that phase's floor.
    mutating func addIdleDisk(_ fsync: Distribution, pauseMilliseconds: Int) {
        let label = "disk: write 4 KiB + fsync after \(pauseMilliseconds) ms without I/O (an idle commit's floor)"
        add(.distribution("disk_paused_fsync_ms", label, fsync))
    }
}
