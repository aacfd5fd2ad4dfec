import ArgumentParser
import Foundation
import JamClient
import JamProtocol

/// `jam-bench restart`: how soon a server with many stored sessions serves again.
struct RestartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restart",
        abstract: "Time from starting jam serve over N stored sessions (10,000 by default) until it serves them, after a graceful stop and after SIGKILL.",
        discussion: """
            Set-up fills a server with --sessions sessions, each with a host, --queue tracks (the
            first one playing for an hour) and a vote. Then, twice (stopped with SIGTERM, then
            with SIGKILL after more commands): the server starts again on the same data folder
            and the benchmark measures the time until it prints that it listens, until the first
            stored session is served (GET /api/v1/sessions/{id}, which brings that session back
            from the store), and each of --probes sessions' first and second GET.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Stored sessions.")
    var sessions: Int = 10_000

    @Option(help: "Tracks queued in each session.")
    var queue: Int = 3

    @Option(help: "Sessions read after each restart (their first read brings them back from the store).")
    var probes: Int = 200

    /// A stored session, with its host's token.
    struct Stored: Sendable {
        let id: SessionID
        let token: String
    }

    func run() async throws {
        let smoke = common.smoke
        let count = smoke ? 40 : max(1, min(sessions, 50_000))
        let probeCount = min(count, smoke ? 10 : max(1, probes))
        try await common.awaitQuietMachine()
        var report = Report(bench: "restart")
        report.set("sessions", "\(count) stored, \(queue) tracks and a vote each")
        guard common.serverURL == nil else { throw ValidationError("restart starts and stops jam serve itself; --server-url does not apply") }
        let jam = try JamExecutable.locate(common.jam)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("jam-bench-restart-\(UUID().uuidString.prefix(8))")
        var server = try await ServerUnderTest.start(jam, protocol: .openjam, dataDirectory: data)
        report.describe(server: server, jam: jam, wire: .openjam)
        defer {
            if !common.keepData { try? FileManager.default.removeItem(at: data) }
        }
        do {
            Console.line("restart: storing \(count) sessions…")
            let started = MonoTime.seconds()
            let stored = try await fill(server, count: count)
            report.add(.value("setup_seconds", "set-up: \(count) sessions stored", MonoTime.seconds() - started, unit: "s"))
            if let sample = server.sample() { report.add(.value("rss_before_mib", "server RSS with every session live", sample.rssMiB, unit: "MiB")) }
            var random = SeededRandom(seed: common.seed)
            let probeSet = Array(stored.shuffled(using: &random).prefix(probeCount))

            for (key, label, signal) in [("graceful", "after SIGTERM", SIGTERM), ("killed", "after SIGKILL", SIGKILL)] {
                if signal == SIGKILL {
                    // Commands after the last snapshot, so the killed server leaves a log to replay.
                    try await vote(server, probeSet)
                }
                let stopping = MonoTime.seconds()
                await server.child?.stop(signal: signal, timeout: .seconds(30))
                if signal == SIGTERM { report.add(.value("stop_seconds", "graceful stop (final snapshots)", MonoTime.seconds() - stopping, unit: "s")) }
                Console.line("restart: starting again \(label)…")
                let restarted = MonoTime.seconds()
                server = try await ServerUnderTest.start(jam, protocol: .openjam, dataDirectory: data)
                let listening = MonoTime.seconds() - restarted
                let first = try await read(server, probeSet[0])
                let serving = MonoTime.seconds() - restarted
                report.add(.value("\(key)_listening_seconds", "\(label): start → listening", listening, unit: "s"))
                report.add(.value(
                    "\(key)_serving_seconds", "\(label): start → first stored session served", serving, unit: "s",
                    target: .atMost(2, .value, "≤ 2 s")))
                var firstRead = Distribution()
                var secondRead = Distribution()
                firstRead.record(first)
                for probe in probeSet.dropFirst() { firstRead.record(try await read(server, probe)) }
                for probe in probeSet { secondRead.record(try await read(server, probe)) }
                report.add(.distribution("\(key)_first_read_ms", "\(label): a stored session's first read (brought back)", firstRead))
                report.add(.distribution("\(key)_second_read_ms", "\(label): its second read (live)", secondRead))
                if let sample = server.sample() { report.add(.value("\(key)_rss_mib", "\(label): server RSS after the reads", sample.rssMiB, unit: "MiB")) }
            }
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.child?.stop()
        if common.keepData { Console.line("server data kept in \(data.path)") }
        try common.finish(report)
    }

    /// Creates the sessions, 64 at a time.
    private func fill(_ server: ServerUnderTest, count: Int) async throws -> [Stored] {
        let http = LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port)
        let rest = OpenJamREST(http: http)
        let queueLength = max(1, min(queue, 20))
        return try await withThrowingTaskGroup(of: Stored.self) { group in
            var made: [Stored] = []
            var next = 0
            func launch() {
                let index = next
                next += 1
                group.addTask {
                    let host = try await rest.guest("host \(index)")
                    let view = try await rest.create(host.token, settings: SettingsPatch())
                    var items: [QueueItem] = []
                    for n in 0..<queueLength {
                        let track = Track(id: "r\(index)-\(n)", name: "Track \(n)", artist: "jam-bench", durationMs: 3_600_000, source: .external)
                        items.append(try await http.json(
                            .POST, "/api/v1/sessions/\(view.session.id)/queue", token: host.token,
                            body: AddToQueue(track: track, nonce: "r\(index)-\(n)"), from: SourceAddresses.shared.next(), as: QueueItem.self))
                    }
                    if let votable = items.last, items.count > 1 {
                        _ = try await http.json(
                            .PUT, "/api/v1/sessions/\(view.session.id)/queue/\(votable.id)/vote", token: host.token, body: VoteRequest(value: 1),
                            from: SourceAddresses.shared.next(), as: VoteResponse.self)
                    }
                    return Stored(id: view.session.id, token: host.token)
                }
            }
            for _ in 0..<min(64, count) { launch() }
            while let stored = try await group.next() {
                made.append(stored)
                if made.count % 1_000 == 0 { Console.line("restart: \(made.count) sessions stored") }
                if next < count { launch() }
            }
            return made
        }
    }

    /// Clears each probe's vote: a record after the last snapshot.
    private func vote(_ server: ServerUnderTest, _ probes: [Stored]) async throws {
        let http = LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port)
        for probe in probes {
            let view = try LoopbackHTTP.decode(SessionView.self, try await http.send(.GET, "/api/v1/sessions/\(probe.id)", token: probe.token), "GET session")
            guard let item = view.queue.last else { continue }
            _ = try await http.json(.PUT, "/api/v1/sessions/\(probe.id)/queue/\(item.id)/vote", token: probe.token, body: VoteRequest(value: 0), as: VoteResponse.self)
        }
    }

    /// One GET of a session's view, in milliseconds; fails unless it is the session.
    private func read(_ server: ServerUnderTest, _ stored: Stored) async throws -> Double {
        let http = LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port)
        let start = MonoTime.nanos()
        let view = try LoopbackHTTP.decode(SessionView.self, try await http.send(.GET, "/api/v1/sessions/\(stored.id)", token: stored.token), "GET session")
        let elapsed = Double(MonoTime.nanos() - start) / 1_000_000
        guard view.session.id == stored.id, view.queue.count + (view.nowPlaying == nil ? 0 : 1) == max(1, min(queue, 20)) else {
            throw LoopbackHTTP.Failure(description: "session \(stored.id) came back wrong: \(view.queue.count) queued")
        }
        return elapsed
    }
}
