import ArgumentParser
import Foundation
import JamClient
import JamClientNIO
import JamProtocol

/// `jam-bench prepare`: from "play" on a fresh session with a large library to the first `playCommit`.
struct PrepareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prepare",
        abstract: "Time from \"play\" on a fresh session with a 10,000-track library to the first playCommit, and the server's part of it.",
        discussion: """
            The server gets a library of tiny tagged WAV files (generated once into the cache) with
            --music. Each iteration opens a fresh session with the library shuffle on and a device
            on its socket, sends `play` with the queue empty (so the server draws from the whole
            library), loads the announced track over HTTP like a device would, sends `ready`, and
            waits for `playCommit`. The server's part is play → playPrepare plus ready →
            playCommit; the device's part is the audio fetch. The start itself is a lead later
            (at least 500 ms), by design.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Tracks in the library.")
    var tracks: Int = 10_000

    @Option(help: "Fresh sessions to measure.")
    var iterations: Int = 20

    @Option(help: "Where the generated library is cached (default $XDG_CACHE_HOME/openjam-bench).")
    var cache: String?

    /// Generates (or reuses) the library, measures every iteration and prints the report.
    func run() async throws {
        let smoke = common.smoke
        let trackCount = smoke ? 200 : max(1, min(tracks, 100_000))
        let runs = smoke ? 3 : max(1, min(iterations, 200))
        try await common.awaitQuietMachine()
        var report = Report(bench: "prepare")
        report.set("library", "\(trackCount) WAV tracks")
        report.set("iterations", "\(runs) fresh sessions")
        let library = try BenchLibrary.ensure(count: trackCount, in: cache.map { URL(fileURLWithPath: $0) } ?? BenchLibrary.cacheRoot)
        let (server, jam) = try await common.startServer(.openjam, music: library)
        report.describe(server: server, jam: jam, wire: .openjam)
        if let startup = server.startupSeconds {
            report.add(.value("server_startup_s", "server start with the library (scan included)", startup, unit: "s"))
        }
        do {
            let http = LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port)
            let rest = OpenJamREST(http: http)
            var figures = PrepareFigures()
            var trackIds: Set<String> = []
            let usage = CPUUsage.start(server: server)
            for iteration in 0..<runs {
                let sample = try await once(iteration, rest: rest, http: http, server: server)
                figures.add(sample)
                trackIds.insert(sample.trackId)
            }
            report.add(.distribution("play_to_commit_ms", "play → first playCommit (device included)", figures.total))
            report.add(.distribution("server_ms", "server's part: play → playPrepare + ready → playCommit", figures.server,
                target: .atMost(20, .p99, "≤ 20 ms")))
            report.add(.distribution("play_to_prepare_ms", "play → playPrepare received", figures.prepare))
            report.add(.distribution("ready_to_commit_ms", "ready → playCommit received", figures.commit))
            report.add(.distribution("device_fetch_ms", "device: fetch the announced track's audio", figures.fetch))
            report.add(.distribution("lead_ms", "announced start − play (the lead)", figures.lead))
            report.add(.value("distinct_tracks", "distinct tracks drawn", Double(trackIds.count), unit: "of \(runs)"))
            if let sample = server.sample() { report.add(.value("server_rss_mib", "server RSS with the library loaded", sample.rssMiB, unit: "MiB")) }
            usage.report(into: &report, prefix: "iterations")
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.stop(keepData: common.keepData)
        try common.finish(report)
    }

    /// One fresh session: play, prepare, fetch, ready, commit.
    private func once(_ iteration: Int, rest: OpenJamREST, http: LoopbackHTTP, server: ServerUnderTest) async throws -> PrepareSample {
        let host = try await rest.guest("prepare \(iteration)")
        let view = try await rest.create(host.token, settings: SettingsPatch(fallback: true))
        guard let url = URL(string: "ws://\(server.host):\(server.port)/api/v1/sessions/\(view.session.id)/realtime") else {
            throw ScenarioFailure(description: "bad socket URL")
        }
        let headers = ["Authorization": "Bearer \(host.token)"]
        let box = SampleBox()
        _ = try await NIOWebSocketTransport().withSocket(url: url, headers: headers) { socket in
            try await Self.waitFor("stateSync", on: socket)
            let sent = MonoTime.nanos()
            let sentWall = MonoTime.wallMs()
            try await socket.send(ClientFrame(.play, id: "play-\(iteration)").jsonString())
            var sample = PrepareSample(sent: sent, sentWall: sentWall)
            while let text = try await socket.receive() {
                let at = MonoTime.nanos()
                let envelope = try ServerEnvelope.decode(Data(text.utf8))
                switch envelope.event {
                case .playPrepare(let prepare):
                    sample.prepared = at
                    sample.trackId = prepare.item.track.id
                    sample.startAt = Double(prepare.startAt)
                    let audio = try await http.send(.GET, "/api/v1/tracks/\(prepare.item.track.id)/audio")
                    guard audio.status == 200, !audio.body.isEmpty else {
                        throw ScenarioFailure(description: "the announced track's audio answered \(audio.status)")
                    }
                    sample.fetched = MonoTime.nanos()
                    try await socket.send(ClientFrame(.ready(Ready(epoch: prepare.epoch))).jsonString())
                case .playCommit:
                    sample.committed = at
                    await box.set(sample)
                    await socket.close()
                    return
                case .error(let error):
                    throw ScenarioFailure(description: "the server refused \(error.id ?? "a command"): \(error.message)")
                default:
                    continue
                }
            }
        }
        guard let sample = await box.sample else { throw ScenarioFailure(description: "the socket closed before playCommit") }
        try await rest.end(host.token, view.session.id)
        return sample
    }

    /// Reads frames until one of `type` arrives.
    private static func waitFor(_ type: String, on socket: any RealtimeSocket) async throws {
        while let text = try await socket.receive() {
            if FrameScan.envelope(.init(string: text))?.type == type { return }
        }
        throw ScenarioFailure(description: "the socket closed before \(type)")
    }
}

/// One iteration's instants (monotonic ns) and the announced start.
struct PrepareSample: Sendable {
    var sent: UInt64
    var sentWall: Double
    var prepared: UInt64 = 0
    var fetched: UInt64 = 0
    var committed: UInt64 = 0
    var trackId = ""
    var startAt = 0.0
}

/// Hands the sample out of the socket's closure.
actor SampleBox {
    private(set) var sample: PrepareSample?

    /// Keeps the finished sample.
    func set(_ sample: PrepareSample) {
        self.sample = sample
    }
}

/// The prepare benchmark's distributions.
struct PrepareFigures {
    var total = Distribution()
    var server = Distribution()
    var prepare = Distribution()
    var commit = Distribution()
    var fetch = Distribution()
    var lead = Distribution()

    /// Records one iteration in every distribution.
    mutating func add(_ s: PrepareSample) {
        /// Milliseconds between two monotonic instants in ns.
        func ms(_ from: UInt64, _ to: UInt64) -> Double { Double(Int64(bitPattern: to &- from)) / 1_000_000 }
        total.record(ms(s.sent, s.committed))
        prepare.record(ms(s.sent, s.prepared))
        commit.record(ms(s.fetched, s.committed))
        fetch.record(ms(s.prepared, s.fetched))
        server.record(ms(s.sent, s.prepared) + ms(s.fetched, s.committed))
        lead.record(s.startAt - s.sentWall)
    }
}
