import ArgumentParser
import Foundation

/// Carries one sample out of a `@Sendable` closure.
actor ProcessSampleBox {
    private(set) var value: ProcessSample?

    /// Keeps `sample`.
    func set(_ sample: ProcessSample?) {
        value = sample
    }
}

/// `jam-bench idle`: the server's memory with many idle sockets open.
struct IdleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Server memory (RSS) with N idle realtime sockets: 10,000 by default, in sessions of 10.",
        discussion: """
            Members sign in and join over REST (from many loopback addresses), then every one opens
            its realtime socket and gets its snapshot; the sockets then stay open and silent for
            --hold seconds. Reported: the server's RSS before and after the sockets, per socket,
            its peak, and its CPU while they idle. Bounded: at most 20,000 sockets.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Sockets to open (at most 20,000; each process has 20,000 file descriptors here).")
    var sockets: Int = 10_000

    @Option(help: "Members per session.")
    var members: Int = 10

    @Option(help: "Seconds the sockets stay open and idle.")
    var hold: Double = 5

    /// Opens the sockets, holds them idle, samples the server and prints the report.
    func run() async throws {
        let smoke = common.smoke
        let memberCount = max(1, min(members, 1_000))
        let sessionCount = max(1, (smoke ? 200 : min(sockets, 20_000)) / memberCount)
        let total = sessionCount * memberCount
        let holdSeconds = smoke ? 1 : max(1, min(hold, 60))
        try await common.awaitQuietMachine()
        var report = Report(bench: "idle")
        report.set("sockets", "\(total) (\(sessionCount) sessions × \(memberCount))")
        let (server, jam) = try await common.startServer(.openjam)
        report.describe(server: server, jam: jam, wire: .openjam)
        do {
            let fresh = server.sample()
            let started = MonoTime.seconds()
            Console.line("idle: \(total) members sign in, join and connect…")
            let stored = ProcessSampleBox()
            let room = try await LoadRoom.openjam(
                server: server, sessions: sessionCount, members: memberCount, votable: 0, voteShare: 0, seed: common.seed, queue: false,
                beforeConnect: { await stored.set(server.sample()) })
            let empty = await stored.value
            report.add(.value("setup_seconds", "sign in, join and connect everybody", MonoTime.seconds() - started, unit: "s"))
            let usage = CPUUsage.start(server: server)
            try await Task.sleep(for: .milliseconds(Int64(holdSeconds * 1000)))
            usage.report(into: &report, prefix: "hold")
            let held = server.sample()
            var closed = 0
            for sink in room.all where try await sink.onLoop({ !$0.isSynced || $0.closedReason != nil }) { closed += 1 }
            if closed > 0 { report.fail("\(closed) sockets closed or never got their snapshot") }
            if let fresh { report.add(.value("server_rss_fresh_mib", "server RSS at start", fresh.rssMiB, unit: "MiB")) }
            if let empty { report.add(.value("server_rss_sessions_mib", "server RSS with the sessions and members, no sockets", empty.rssMiB, unit: "MiB")) }
            if let held {
                report.add(.value("server_rss_mib", "server RSS with \(total) idle sockets", held.rssMiB, unit: "MiB",
                    target: total >= 10_000 ? .atMost(300, .value, "≤ 300 MiB with 10,000") : nil))
                report.add(.value("server_peak_rss_mib", "server peak RSS", held.peakRSSMiB, unit: "MiB"))
                report.add(.value("server_threads", "server threads", Double(held.threads), unit: "threads"))
                if let empty { report.add(.value("rss_per_socket_kib", "RSS per open socket", (held.rssMiB - empty.rssMiB) * 1024 / Double(total), unit: "KiB")) }
                if let fresh { report.add(.value("rss_per_member_kib", "RSS per member (session share, member and socket)", (held.rssMiB - fresh.rssMiB) * 1024 / Double(total), unit: "KiB")) }
            } else {
                report.fail("no server process to sample (pass --server-pid with --server-url)")
            }
            await room.close()
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.stop(keepData: common.keepData)
        try common.finish(report)
    }
}
