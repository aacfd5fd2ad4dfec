import ArgumentParser
import Foundation
import JamClient
import JamProtocol
import Synchronization

/// `jam-bench soak`: mixed load from the SDK while the server is killed and restarted.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Mixed load from the SDK while jam serve is killed with SIGKILL at random intervals and restarted; then checks what must survive.",
        discussion: """
            --sessions sessions of --members members each (the host included) connect with the
            SDK's SessionClient (two more per session join during the run) and, a few times a
            second each, add short songs (so the server
            auto-advances), vote, skip or ask to, and drop their sockets. Every --kill-min to
            --kill-max seconds the server is killed with SIGKILL and started again on the same
            data folder and port; the clients find their own way back. At the end: every
            acknowledged add is still there (sent again with its nonce, the server answers with
            the same item), no song was applied twice, every acknowledged vote on a queued item
            shows, every client's view equals what the server shows that member, and the
            server's memory and open file descriptors did not grow from cycle to cycle.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "How long to run, minutes.")
    var minutes: Double = 10

    @Option(help: "Sessions.")
    var sessions: Int = 4

    @Option(help: "Members per session, the host included.")
    var members: Int = 5

    @Option(name: .customLong("kill-min"), help: "Shortest time between kills, seconds.")
    var killMin: Int = 20

    @Option(name: .customLong("kill-max"), help: "Longest time between kills, seconds.")
    var killMax: Int = 60

    /// Set once every member's loop has ended.
    final class Finished: Sendable {
        let done = Atomic<Bool>(false)
    }

    /// The server's size just before a kill (or at the end).
    struct Footprint {
        let rssMiB: Double
        /// Open descriptors other than sockets (files, the database, pipes, event fds).
        let fds: Int
        /// Open sockets: the clients' connections come and go with the load.
        let sockets: Int
    }

    func validate() throws {
        guard minutes > 0, minutes <= 24 * 60 else { throw ValidationError("--minutes must be above 0 and at most a day, got \(minutes)") }
        guard (1...50).contains(sessions), (1...50).contains(members) else { throw ValidationError("--sessions and --members must be 1 to 50") }
        guard killMin >= 1, killMax >= killMin else { throw ValidationError("--kill-min must be at least 1 and at most --kill-max") }
    }

    func run() async throws {
        guard common.serverURL == nil else { throw ValidationError("soak starts, kills and restarts jam serve itself; --server-url does not apply") }
        var report = Report(bench: "soak")
        report.set("load", "\(sessions) sessions × \(members) members (SDK), kills every \(killMin)–\(killMax) s for \(minutes) min")
        let jam = try JamExecutable.locate(common.jam)
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("jam-bench-soak-\(UUID().uuidString.prefix(8))")
        var server = try await ServerUnderTest.start(jam, protocol: .openjam, dataDirectory: data)
        report.describe(server: server, jam: jam, wire: .openjam)
        let port = server.port
        defer {
            if !common.keepData { try? FileManager.default.removeItem(at: data) }
        }
        let ledger = SoakLedger()
        var footprints: [Footprint] = []
        do {
            let (people, ids) = try await Self.assemble(
                server, sessions: sessions, members: members, joinWithin: .seconds(minutes * 60 * 0.7), seed: common.seed)
            try await withThrowingTaskGroup(of: Void.self) { connections in
                for member in people { connections.addTask { await member.connect(ledger: ledger) } }
                let acting = Finished()
                let seed = common.seed
                let actions = Task {
                    await withTaskGroup(of: Void.self) { group in
                        for member in people { group.addTask { await member.act(ledger: ledger, seed: seed &+ UInt64(member.index)) } }
                    }
                    acting.done.store(true, ordering: .relaxed)
                }
                var random = SeededRandom(seed: common.seed)
                let end = ContinuousClock.now + .seconds(minutes * 60)
                while ContinuousClock.now < end {
                    let wait = Duration.seconds(Int.random(in: killMin...killMax, using: &random))
                    guard ContinuousClock.now + wait < end else {
                        try await Task.sleep(until: end)
                        break
                    }
                    try await Task.sleep(for: wait)
                    footprints.append(try Self.footprint(server))
                    await server.child?.stop(signal: SIGKILL)
                    let restarting = ContinuousClock.now
                    server = try await ServerUnderTest.start(jam, protocol: .openjam, dataDirectory: data, port: port)
                    Console.line(
                        "soak: cycle \(footprints.count): killed with \(String(format: "%.0f", footprints.last!.rssMiB)) MiB, \(footprints.last!.fds) files and \(footprints.last!.sockets) sockets open, listening again after \(ContinuousClock.now - restarting)")
                }
                footprints.append(try Self.footprint(server))
                for member in people { member.stop() }
                // A command under way finishes first; one that is never answered is a finding.
                let answered = ContinuousClock.now + .seconds(60)
                while !acting.done.load(ordering: .relaxed), ContinuousClock.now < answered { try await Task.sleep(for: .milliseconds(100)) }
                if !acting.done.load(ordering: .relaxed) {
                    report.fail("a command was never answered within 60 s of the end")
                    actions.cancel()
                }
                try await Self.judge(people: people.filter(\.isMember), ids: ids, ledger: ledger, footprints: footprints, report: &report)
                connections.cancelAll()
            }
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.child?.stop()
        try common.finish(report)
    }

    /// Signs everybody in, creates the sessions and joins the members; two more per session
    /// are signed in to join at random times within `joinWithin`.
    static func assemble(
        _ server: ServerUnderTest, sessions: Int, members: Int, joinWithin: Duration, seed: UInt64
    ) async throws -> ([SoakMember], [SessionID]) {
        var random = SeededRandom(seed: seed &+ 7)
        guard let url = URL(string: server.baseURL) else { throw ScenarioFailure(description: "bad server URL \(server.baseURL)") }
        var people: [SoakMember] = []
        var ids: [SessionID] = []
        for session in 0..<sessions {
            var hostAPI = JamAPI(server: url)
            let host = try await hostAPI.signIn(displayName: "Host \(session)")
            let view = try await hostAPI.createSession(
                CreateSessionRequest(name: "Soak \(session)", settings: SettingsPatch(maxMembers: members + 10)))
            ids.append(view.session.id)
            people.append(SoakMember(
                index: people.count, session: session, isHost: true, api: hostAPI, sessionId: view.session.id, me: host.userId, seed: seed &+ 1_000))
            for n in 1..<members {
                var api = JamAPI(server: url)
                let me = try await api.signIn(displayName: "Member \(session).\(n)")
                _ = try await api.join(code: view.session.joinCode)
                people.append(SoakMember(
                    index: people.count, session: session, isHost: false, api: api, sessionId: view.session.id, me: me.userId,
                    seed: seed &+ 1_000 &+ UInt64(people.count)))
            }
            for n in 0..<2 {
                var api = JamAPI(server: url)
                let me = try await api.signIn(displayName: "Late \(session).\(n)")
                let after = Duration.milliseconds(Int64.random(in: 1_000...max(1_000, Int64(joinWithin / .milliseconds(1))), using: &random))
                people.append(SoakMember(
                    index: people.count, session: session, isHost: false, api: api, sessionId: view.session.id, me: me.userId,
                    seed: seed &+ 1_000 &+ UInt64(people.count), lateJoin: (after, view.session.joinCode)))
            }
        }
        return (people, ids)
    }

    static func footprint(_ server: ServerUnderTest) throws -> Footprint {
        guard let pid = server.pid else { throw ScenarioFailure(description: "the server's process is unknown") }
        let files = FileManager.default
        let entries = try files.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        let sockets = entries.filter { (try? files.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))?.hasPrefix("socket:") == true }.count
        return Footprint(rssMiB: try ProcFile.sample(pid: pid).rssMiB, fds: entries.count - sockets, sockets: sockets)
    }

    /// Checks the end state and adds the figures.
    static func judge(people: [SoakMember], ids: [SessionID], ledger: SoakLedger, footprints: [Footprint], report: inout Report) async throws {
        let cycles = footprints.count - 1
        let adds = await ledger.adds
        let acknowledged = await ledger.acknowledged
        let refused = await ledger.refused
        report.add(.value("cycles", "kill-and-restart cycles", Double(cycles), unit: ""))
        report.add(.value("acknowledged", "commands acknowledged", Double(acknowledged.values.reduce(0, +)), unit: ""))
        report.set("acknowledged", acknowledged.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        report.set("refused", refused.isEmpty ? "none" : refused.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        report.set("reconnects", "\(await ledger.reconnects) asked for, plus one per kill per member")
        report.set("joins", "\(await ledger.joins) during the run")
        report.set("rss_mib", footprints.map { String(format: "%.0f", $0.rssMiB) }.joined(separator: " → "))
        report.set("fds", footprints.map { "\($0.fds)" }.joined(separator: " → ") + " (not sockets)")
        report.set("sockets", footprints.map { "\($0.sockets)" }.joined(separator: " → "))

        let disagreements = await SoakVerdict.mirrorsAgree(people, sessionIds: ids, within: .seconds(30))
        report.add(.value("views_differing", "clients whose view differs from the server's", Double(disagreements.count), unit: ""))
        for line in disagreements.prefix(5) { report.fail("view: \(line)") }

        let dropped = await ledger.dropped
        report.add(.value("members_dropped", "members the server let go for good", Double(dropped.count), unit: ""))
        for (member, reason) in dropped.sorted(by: { $0.key < $1.key }).prefix(5) { report.fail("member \(member) was let go: \(reason)") }

        let votes = await SoakVerdict.lostVotes(await ledger.votes, members: people, sessionIds: ids)
        report.add(.value("votes_lost", "acknowledged votes on queued items not shown", Double(votes.count), unit: ""))
        for line in votes.prefix(5) { report.fail("vote: \(line)") }

        var twice: [String] = []
        for (session, id) in ids.enumerated() {
            guard let host = people.first(where: { $0.session == session && $0.isHost }) else { continue }
            twice += SoakVerdict.appliedTwice(try await host.api.session(id))
        }
        report.add(.value("applied_twice", "songs applied twice", Double(twice.count), unit: ""))
        for line in twice.prefix(5) { report.fail("applied twice: \(line)") }

        let lost = await SoakVerdict.lostAdds(adds, members: people)
        report.add(.value("adds_lost", "acknowledged adds lost (of \(adds.count))", Double(lost.count), unit: ""))
        for line in lost.prefix(5) { report.fail("lost: \(line)") }
        if adds.isEmpty { report.fail("no add was acknowledged: the load did not run") }
        if cycles == 0 { report.fail("the server was never killed: run longer than --kill-max") }

        // Each cycle is a fresh process on a data folder that grows only to its limits: the
        // later cycles may not be heavier than the first ones beyond noise.
        let third = max(1, footprints.count / 3)
        let early = footprints.prefix(third), late = footprints.suffix(third)
        let earlyRSS = early.map(\.rssMiB).reduce(0, +) / Double(early.count)
        let lateRSS = late.map(\.rssMiB).reduce(0, +) / Double(late.count)
        let earlyFDs = early.map(\.fds).max() ?? 0, lateFDs = late.map(\.fds).max() ?? 0
        report.add(.value("rss_growth_mib", "server RSS, last cycles minus first cycles", lateRSS - earlyRSS, unit: "MiB"))
        report.add(.value("fd_growth", "open descriptors other than sockets, last cycles minus first", Double(lateFDs - earlyFDs), unit: ""))
        if lateRSS > earlyRSS * 1.25 + 16 { report.fail(String(format: "RSS grew across cycles: %.0f → %.0f MiB", earlyRSS, lateRSS)) }
        if lateFDs > earlyFDs + 8 { report.fail("open descriptors other than sockets grew across cycles: \(earlyFDs) → \(lateFDs)") }
    }
}
