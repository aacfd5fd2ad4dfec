import ArgumentParser
import Foundation

/// `jam-bench fanout`: delivery latency and throughput of votes and queue changes fanned out to every member.
struct FanoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Delivery latency, deliveries/s, loss, server CPU and memory for S sessions × M members under open-loop votes and adds.",
        discussion: """
            Phases (--phases): echo — the load client against a trivial echo server at 1.5 × --rate,
            to show the client is not the limit, with the floors it measures on the way (its own CPU
            per command, and a quiet session whose messages it fsyncs before relaying); idle — one 10-member session on an idle server;
            load — S × M members at --rate; ramp — from --ramp-from, ×--ramp-factor a step, the highest rate
            whose p99 stays under 20 ms with nothing lost. Latency runs from a command's intended
            send instant (open loop, so a slow server cannot slow the load down) to each member's
            receipt of each event it caused; commands are matched to events by the acks' seq.
            PirateRadio has no votes or acks: each DJ adds and removes, and the n-th queue update
            answers the n-th command.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("protocol"), help: "openjam or pirate-radio.")
    var wire: WireProtocol = .openjam

    @Option(help: "Sessions in the load phase.")
    var sessions: Int = 100

    @Option(help: "Members per session, the host included (PirateRadio: at most 10).")
    var members: Int = 10

    @Option(help: "Commands per second over all sessions in the load phase.")
    var rate: Double = 1_600

    @Option(help: "Seconds of the load phase.")
    var seconds: Double = 10

    @Option(name: .customLong("vote-share"), help: "OpenJam: the share of commands that are votes; the rest add or remove queue items.")
    var voteShare: Double = 0.8

    @Option(help: "Which phases to run, comma-separated: echo, idle, load, ramp.")
    var phases = "echo,idle,load,ramp"

    @Option(name: .customLong("ramp-from"), help: "The ramp's first rate, commands/s over all sessions.")
    var rampFrom: Double = 100

    @Option(name: .customLong("ramp-steps"), help: "Most steps of the ramp; it stops at the first that fails.")
    var rampSteps: Int = 7

    @Option(name: .customLong("ramp-factor"), help: "Each ramp step's rate over the one before.")
    var rampFactor: Double = 1.5

    @Option(name: .customLong("step-seconds"), help: "Seconds per ramp step.")
    var stepSeconds: Double = 3

    @Option(help: "Nodes sharing one PostgreSQL database (needs --database); members of every session spread over them.")
    var nodes = 1

    @Option(help: "A PostgreSQL cluster (postgres://…, loopback): the run creates a database of its own there and every node keeps its sessions in it (scripts/postgres.sh start prints one).")
    var database: String?

    @Option(name: .customLong("echo-bytes"), help: "Size of the echo server's event frames, bytes (larger than OpenJam's, whose mean the load phase reports: ~190 bytes since events carry only the change).")
    var echoBytes = 2_700

    /// Runs the echo check and the phases, and prints the report.
    func run() async throws {
        let wire = self.wire
        let smoke = common.smoke
        let memberCount = max(1, min(smoke ? 3 : members, wire == .pirateRadio ? 10 : 1000))
        let sessionCount = max(1, min(smoke ? 2 : sessions, 2_000))
        let loadRate = smoke ? 20 : rate
        let loadSeconds = smoke ? 1.5 : max(1, min(seconds, 60))
        let chosen = Set(phases.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard chosen.isSubset(of: ["echo", "idle", "load", "ramp"]) else { throw ValidationError("--phases takes echo, idle, load and ramp") }
        let steps = smoke || !chosen.contains("ramp") ? 0 : max(0, min(rampSteps, 12))
        let stepLength = max(1, min(stepSeconds, 15))
        let rampRates = (0..<steps).map { max(1, rampFrom) * pow(max(1.01, min(rampFactor, 4)), Double($0)) }
        try await common.awaitQuietMachine()
        var report = Report(bench: "fanout")
        report.set("sessions", "\(sessionCount) × \(memberCount) members")
        report.set("rate", "\(Int(loadRate)) cmd/s for \(Report.number(loadSeconds)) s")
        if wire == .openjam { report.set("mix", "\(Int(voteShare * 100))% votes, the rest adds/removes") }
        if common.serverURL == nil, !smoke || chosen.contains("load") {
            report.addDisk(try DiskProbe.fsyncLatency(directory: FileManager.default.temporaryDirectory, seconds: smoke ? 0.3 : 3))
        }
        if common.serverURL == nil, chosen.contains("idle") {
            let pause = Int(1000 / Self.idleRate(smoke: smoke))
            let paused = try DiskProbe.pausedFsyncLatency(
                directory: FileManager.default.temporaryDirectory, pauseMilliseconds: pause, count: smoke ? 3 : 60)
            report.addIdleDisk(paused, pauseMilliseconds: pause)
        }

        if chosen.contains("echo") {
            let echoRate = loadRate * 1.5
            do {
                let (quiet, durable, busy) = try await echoCheck(
                    idleMembers: smoke ? 3 : 10, sessions: sessionCount, members: memberCount, rate: echoRate, seconds: smoke ? 1 : 4)
                Console.line(quiet.summary)
                Console.line(durable.summary)
                Console.line(busy.summary)
                report.add(.distribution("echo_idle_delivery_ms", "echo server, one quiet session: delivery (the floor)", quiet.delivery))
                report.add(.distribution(
                    "echo_durable_idle_delivery_ms", "echo server, one quiet session, each message fsynced first: delivery (a stored command's floor)",
                    durable.delivery))
                report.add(.value("echo_deliveries_per_s", "echo server under load: deliveries/s", busy.deliveryRate, unit: "/s"))
                report.add(.distribution("echo_delivery_ms", "echo server under load: delivery", busy.delivery))
                if let cpu = busy.clientCPU { report.add(.value("echo_client_cpu_percent", "echo server under load: load client CPU", cpu, unit: "% of a core")) }
                if let cpu = busy.serverCPU, busy.answeredRate > 0 {
                    // The same socket writes as the server's, with no decoding, state or store: what
                    // any server on NIO pays per command for this fan-out on this machine.
                    report.add(.value("echo_server_cpu_ms_per_command", "echo server under load: its CPU per command (writes only)", cpu * 10 / busy.answeredRate, unit: "ms"))
                }
                for phase in [quiet, durable, busy] where !phase.isClean {
                    report.fail("the load client lost events against the echo server: \(phase.lost) lost, \(phase.duplicated) duplicated, \(phase.errors.prefix(2))")
                }
                report.note(String(
                    format: "load client check: from a trivial echo server offered %.0f cmd/s (%.1f× the load phase's rate) it received %.0f deliveries/s, p99 %@; a quiet echo session's p50 %@ is the wake-up floor of this machine, and %@ with each message fsynced first the floor of a stored idle command",
                    echoRate, echoRate / loadRate, busy.deliveryRate, Report.ms(busy.delivery.p99), Report.ms(quiet.delivery.median),
                    Report.ms(durable.delivery.median)))
            } catch {
                report.fail("the echo check failed: \(error)")
            }
        }

        guard nodes == 1 || database != nil else { throw ValidationError("--nodes needs --database (a PostgreSQL cluster on loopback)") }
        guard (1...8).contains(nodes) else { throw ValidationError("--nodes takes 1 to 8") }
        guard database == nil || (wire == .openjam && common.serverURL == nil) else {
            throw ValidationError("--database starts OpenJam nodes itself (not with --server-url or --protocol pirate-radio)")
        }
        var shared: BenchDatabase?
        if let database { shared = try await BenchDatabase.create(in: database) }
        let (server, jam) = try await startNodes(wire, database: shared)
        report.describe(server: server, jam: jam, wire: wire)
        if shared != nil {
            report.set("store", "PostgreSQL, \(nodes) node\(nodes == 1 ? "" : "s") (members of each session spread over them)")
            report.note("server CPU and memory add the nodes up; database CPU is PostgreSQL's processes")
        }
        do {
            try await measure(
                server: server, wire: wire, phases: chosen, sessions: sessionCount, members: memberCount, rate: loadRate, seconds: loadSeconds,
                ramp: rampRates, stepSeconds: stepLength, into: &report)
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.stop(keepData: common.keepData)
        await shared?.drop()
        try common.finish(report)
    }

    /// The server, or with `--database` `--nodes` of them on one database (the first
    /// carrying the others as peers).
    private func startNodes(_ wire: WireProtocol, database: BenchDatabase?) async throws -> (ServerUnderTest, JamExecutable?) {
        guard let database else { return try await common.startServer(wire) }
        let jam = try JamExecutable.locate(common.jam)
        Console.line("starting \(nodes) × \(jam.path) serve on PostgreSQL…")
        var started: [ServerUnderTest] = []
        do {
            for _ in 0..<nodes {
                started.append(try await ServerUnderTest.start(jam, protocol: wire, extraArguments: ["--database", database.url]))
            }
        } catch {
            for node in started { await node.stop(keepData: false) }
            throw error
        }
        var first = started[0]
        first.peers = Array(started.dropFirst())
        return (first, jam)
    }

    /// The idle-session phase, the load phase and the ramp against `server`.
    private func measure(
        server: ServerUnderTest, wire: WireProtocol, phases: Set<String>, sessions: Int, members: Int, rate: Double, seconds: Double, ramp: [Double],
        stepSeconds: Double, into report: inout Report
    ) async throws {
        if phases.contains("idle") { try await idlePhase(server: server, wire: wire, into: &report) }
        guard phases.contains("load") || !ramp.isEmpty else { return }
        Console.line("fanout: setting up \(sessions) sessions × \(members) members…")
        let setupStarted = MonoTime.seconds()
        let load = try await room(server, wire, sessions: sessions, members: members, seed: common.seed &+ 1)
        report.add(.value("setup_seconds", "set-up (sign-in, join, connect)", MonoTime.seconds() - setupStarted, unit: "s"))
        if let sample = server.sample() { report.add(.value("server_rss_idle_mib", "server RSS with every socket open, before load", sample.rssMiB, unit: "MiB")) }
        if phases.contains("load") { try await loadPhase(load, server: server, wire: wire, rate: rate, seconds: seconds, into: &report) }
        if !ramp.isEmpty { try await rampPhase(load, server: server, rates: ramp, stepSeconds: stepSeconds, into: &report) }
        await load.close()
    }

    /// Commands per second of the idle phase.
    private static func idleRate(smoke: Bool) -> Double { smoke ? 10 : 20 }

    /// One 10-member session on an otherwise idle server, at `idleRate` commands a second.
    private func idlePhase(server: ServerUnderTest, wire: WireProtocol, into report: inout Report) async throws {
        let smoke = common.smoke
        let idleMembers = smoke ? 3 : min(10, wire == .pirateRadio ? 10 : 1000)
        Console.line("fanout: one \(idleMembers)-member session on an idle server…")
        let single = try await room(server, wire, sessions: 1, members: idleMembers, seed: common.seed)
        let idle = try await single.runPhase("idle session", rate: Self.idleRate(smoke: smoke), seconds: smoke ? 1.5 : 10, server: server)
        Console.line(idle.summary)
        await single.close()
        report.add(.distribution("idle_delivery_ms", "idle server, \(idleMembers)-member session: delivery", idle.delivery,
            targets: [.atMost(1, .median, "p50 ≤ 1 ms"), .atMost(3, .p99, "p99 ≤ 3 ms")]))
        let acks = wire == .openjam
        report.add(.distribution("idle_first_delivery_ms", "idle server: command → first member's receipt", idle.firstDelivery))
        report.add(.distribution("idle_spread_ms", "idle server: first → last member's receipt", idle.spread))
        if acks { report.add(.distribution("idle_ack_ms", "idle server: command → ack", idle.ack)) }
        if let faults = idle.serverMajorFaults { report.add(.value("idle_server_major_faults", "idle server: major page faults during the phase", faults, unit: "faults")) }
        report.add(.distribution("idle_send_lag_ms", "idle: load client lag behind its schedule", idle.sendLag))
        if let steal = idle.hostStealMs { report.add(.value("idle_host_steal_ms", "idle: CPU time the host took from this machine (steal)", steal, unit: "ms")) }
        addCommitTimes(idle, phase: "idle", into: &report)
        check(idle, into: &report)
    }

    /// The store's slow commits in `result`, so a latency tail can be told apart from the disk's.
    private func addCommitTimes(_ result: PhaseResult, phase: String, into report: inout Report) {
        guard let slow = result.slowCommits else { return }
        if let mean = result.meanCommitMs { report.add(.value("\(phase)_store_commit_mean_ms", "\(phase): store commit, handed over → stored (mean)", mean, unit: "ms")) }
        let over = String(format: "%.1f ms", PhaseResult.slowCommitSeconds * 1_000)
        report.add(.value("\(phase)_store_slow_commits", "\(phase): store commits over \(over)", slow, unit: "commits"))
        if let within = result.slowestCommitWithinMs {
            report.add(.value("\(phase)_store_slowest_commit_within_ms", "\(phase): the slowest store commit took at most", within, unit: "ms"), optional: true)
        }
    }

    /// S × M members at `rate`.
    private func loadPhase(_ load: LoadRoom, server: ServerUnderTest, wire: WireProtocol, rate: Double, seconds: Double, into report: inout Report) async throws {
        let acks = wire == .openjam
        let main = try await load.runPhase("load", rate: rate, seconds: seconds, server: server)
        Console.line(main.summary)
        // PirateRadio's targets are for its own scale (10 × 10 at 1,000 adds/s), OpenJam's for 100 × 10.
        let pirate = wire == .pirateRadio
        report.add(.value("deliveries_per_s", "load: deliveries/s", main.deliveryRate, unit: "/s", target: pirate ? nil : .atLeast(20_000, .value, "≥ 20,000/s")))
        report.add(.distribution("load_delivery_ms", "load: delivery", main.delivery, target: pirate ? .atMost(10, .p99, "p99 ≤ 10 ms") : .atMost(20, .p99, "p99 ≤ 20 ms")))
        report.add(.value("load_lost", "load: events lost or duplicated", Double(main.lost + main.duplicated), unit: "events", target: .atMost(0, .value, "0")))
        report.add(.distribution("load_first_delivery_ms", "load: command → first member's receipt", main.firstDelivery))
        report.add(.distribution("load_spread_ms", "load: first → last member's receipt", main.spread))
        if acks { report.add(.distribution("load_ack_ms", "load: command → ack", main.ack)) }
        report.add(.value("load_commands_per_s", acks ? "load: commands acknowledged/s" : "load: commands answered/s", main.answeredRate, unit: "/s"))
        report.add(.value("load_mean_frame_bytes", "load: mean frame size", main.deliveries > 0 ? Double(main.bytes) / Double(main.deliveries + main.answered) : .nan, unit: "bytes"), optional: true)
        report.add(.distribution("load_send_lag_ms", "load client lag behind its schedule", main.sendLag))
        if let cpu = main.serverCPU {
            report.add(.value("load_server_cpu_percent", "load: server CPU", cpu, unit: "% of a core", target: pirate ? .atMost(30, .value, "≤ 30% of a core") : nil))
            if main.answeredRate > 0 {
                // 1% of a core for a second is 10 ms of CPU.
                report.add(.value(
                    "load_server_cpu_ms_per_command", "load: server CPU per command", cpu * 10 / main.answeredRate, unit: "ms",
                    target: pirate ? nil : .atMost(0.15, .value, "≤ 0.15 ms")))
            }
        }
        if let cpu = main.databaseCPU {
            report.add(.value("load_database_cpu_percent", "load: database (PostgreSQL) CPU", cpu, unit: "% of a core"))
            if main.deliveryRate > 0, let server = main.serverCPU {
                report.add(.value(
                    "load_cpu_us_per_delivery", "load: nodes + database CPU per delivery", (server + cpu) * 10_000 / main.deliveryRate, unit: "µs"))
            }
        }
        if let cpu = main.clientCPU { report.add(.value("load_client_cpu_percent", "load: load client CPU", cpu, unit: "% of a core")) }
        if let cpu = main.othersCPU { report.add(.value("load_others_cpu_percent", "load: other processes' CPU (noise)", cpu, unit: "% of a core")) }
        if let steal = main.hostStealMs { report.add(.value("load_host_steal_ms", "load: CPU time the host took from this machine (steal)", steal, unit: "ms")) }
        addCommitTimes(main, phase: "load", into: &report)
        if let rate = main.commitRate, let rows = main.rowsPerCommit {
            report.add(.value("load_commits_per_s", "load: store commits/s", rate, unit: "/s"))
            report.add(.value("load_sessions_per_commit", "load: sessions written per commit", rows, unit: "sessions"))
        }
        if let after = main.server?.after {
            report.add(.value("server_rss_mib", "server RSS after load", after.rssMiB, unit: "MiB"))
            report.add(.value("server_peak_rss_mib", "server peak RSS", after.peakRSSMiB, unit: "MiB"))
        }
        check(main, into: &report)
    }

    /// Steps up the rate until p99 passes 20 ms or something is lost; reports the last good step.
    private func rampPhase(_ load: LoadRoom, server: ServerUnderTest, rates ramp: [Double], stepSeconds: Double, into report: inout Report) async throws {
        var best: PhaseResult?
        // The load phase leaves a large WAL and queues behind: let the server settle first.
        try await Task.sleep(for: .seconds(3))
        for (index, stepRate) in ramp.enumerated() {
            let step = try await load.runPhase("ramp \(index + 1)", rate: stepRate, seconds: stepSeconds, server: server)
            Console.line(step.summary)
            report.note(step.summary)
            check(step, into: &report)
            guard step.delivery.p99 <= 20, step.isClean, step.deliveryRate > 0 else {
                report.note(String(format: "ramp stopped at %.0f cmd/s: p99 %@, %d lost", stepRate, Report.ms(step.delivery.p99), step.lost))
                break
            }
            best = step
        }
        if !ramp.isEmpty {
            if let best {
                report.add(.value("max_rate_cmd_per_s", "highest rate with p99 ≤ 20 ms, nothing lost", best.offeredRate, unit: "cmd/s"))
                report.add(.value("max_rate_deliveries_per_s", "… its deliveries/s", best.deliveryRate, unit: "/s", target: .atLeast(30_000, .value, "≥ 30,000/s")))
                report.add(.distribution("max_rate_delivery_ms", "… its delivery", best.delivery))
                report.add(.distribution("max_rate_first_delivery_ms", "… its command → first member's receipt", best.firstDelivery))
                report.add(.distribution("max_rate_spread_ms", "… its first → last member's receipt", best.spread))
                if let cpu = best.serverCPU { report.add(.value("max_rate_server_cpu_percent", "… its server CPU", cpu, unit: "% of a core")) }
                if let cpu = best.othersCPU { report.add(.value("max_rate_others_cpu_percent", "… other processes' CPU (noise)", cpu, unit: "% of a core")) }
                if let rate = best.commitRate, let rows = best.rowsPerCommit {
                    report.add(.value("max_rate_commits_per_s", "… its store commits/s", rate, unit: "/s"))
                    report.add(.value("max_rate_sessions_per_commit", "… sessions written per commit", rows, unit: "sessions"))
                }
                if best.offeredRate == ramp.last { report.note("the ramp ended without reaching the limit: raise --ramp-from or --ramp-steps") }
            } else {
                report.note("no ramp step kept p99 ≤ 20 ms with nothing lost (from \(Int(ramp[0])) cmd/s)")
            }
        }
    }

    /// Sessions set up for `wire`.
    private func room(_ server: ServerUnderTest, _ wire: WireProtocol, sessions: Int, members: Int, seed: UInt64) async throws -> LoadRoom {
        switch wire {
        case .openjam:
            try await LoadRoom.openjam(server: server, sessions: sessions, members: members, votable: 8, voteShare: voteShare, seed: seed)
        case .pirateRadio:
            try await LoadRoom.pirateRadio(server: server, sessions: sessions, members: members, seed: seed)
        }
    }

    /// Fails the run on anything broken in a phase (loss is a figure with a target, errors are bugs).
    private func check(_ phase: PhaseResult, into report: inout Report) {
        if phase.lost + phase.duplicated > 0 { report.fail("\(phase.name): \(phase.lost) events lost, \(phase.duplicated) duplicated") }
        if phase.unanswered > 0 { report.fail("\(phase.name): \(phase.unanswered) commands never answered") }
        if phase.unattributed > 0 { report.note("\(phase.name): \(phase.unattributed) events matched no command of the phase") }
        if !phase.errors.isEmpty { report.fail("\(phase.name): \(phase.errors.count) commands refused, e.g. \(phase.errors[0])") }
        if !phase.closed.isEmpty { report.fail("\(phase.name): \(phase.closed.count) sockets closed, e.g. \(phase.closed[0])") }
        if phase.deliveries == 0 { report.fail("\(phase.name): no deliveries") }
    }

    /// Runs the load client against `jam-bench echo-server`: one quiet session at 20
    /// commands/s (what the idle phase does), the same with each message fsynced before it is
    /// answered, then S × M members at `rate`.
    private func echoCheck(
        idleMembers: Int, sessions: Int, members: Int, rate: Double, seconds: Double
    ) async throws -> (quiet: PhaseResult, durable: PhaseResult, busy: PhaseResult) {
        let executable = try EchoServerProcess.selfPath()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("jam-bench-echo-\(getpid()).log").path
        let child = try ChildProcess.start(executable, ["echo-server", "--port", "0", "--bytes", "\(echoBytes)", "--lifetime", "120"], logPath: log)
        defer {
            do {
                try FileManager.default.removeItem(atPath: log)
            } catch {
                Console.line("warning: could not remove \(log): \(error.localizedDescription)")
            }
        }
        do {
            let port = try await waitFor("the echo server to listen", timeout: .seconds(10)) { () -> Int? in
                let text = child.log()
                guard let range = text.range(of: #"echo listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) else { return nil }
                return text[range].split(separator: ":").last.flatMap { Int($0) }
            }
            let echoServer = ServerUnderTest(host: "127.0.0.1", port: port, pid: child.pid, child: child, dataDirectory: nil, startupSeconds: nil)
            Console.line("fanout: checking the load client against an echo server at 20 and \(Int(rate)) cmd/s…")
            let single = try await LoadRoom.echo(host: "127.0.0.1", port: port, sessions: 1, members: idleMembers, seed: common.seed)
            let quiet = try await single.runPhase("echo, quiet session", rate: Self.idleRate(smoke: common.smoke), seconds: max(1, seconds), server: echoServer)
            await single.close()
            let stored = try await LoadRoom.echo(host: "127.0.0.1", port: port, sessions: 1, members: idleMembers, durable: true, seed: common.seed &+ 3)
            let durable = try await stored.runPhase(
                "echo, quiet session, fsync first", rate: Self.idleRate(smoke: common.smoke), seconds: max(1, seconds), server: echoServer)
            await stored.close()
            let room = try await LoadRoom.echo(host: "127.0.0.1", port: port, sessions: sessions, members: members, seed: common.seed &+ 7)
            let busy = try await room.runPhase("echo, under load", rate: rate, seconds: seconds, server: echoServer)
            await room.close()
            await child.stop()
            return (quiet, durable, busy)
        } catch {
            await child.stop()
            throw error
        }
    }
}

/// Where the benchmark's own executable is, to start its echo server.
enum EchoServerProcess {
    /// `/proc/self/exe`, resolved.
    static func selfPath() throws -> String {
        do {
            return try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        } catch {
            throw ChildProcess.Failure(description: "cannot find the jam-bench executable: \(error.localizedDescription)")
        }
    }
}
