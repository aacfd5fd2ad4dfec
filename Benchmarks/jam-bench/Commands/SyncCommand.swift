import ArgumentParser
import Foundation
import JamClient
import JamProtocol
import NIOHTTP1

/// `jam-bench sync`: clock-offset error and start skew of simulated devices behind delaying proxies.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Clock-offset error and start skew of K devices (JamClient + SimulatedPlayer) behind delaying proxies.",
        discussion: """
            Each device runs JamClient's real sync code on its own clock (the machine's monotonic
            clock plus a random offset) behind its own TCP proxy that delays every chunk by
            delay ± jitter, with up/down asymmetry. All processes share one real clock, so the
            true offset and the true audible position of every device are known exactly.
            Reported: offset error by ping bursts, start error and skew for play, skip,
            auto-advance and mid-song join, and the playback error between starts.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .customLong("protocol"), help: "openjam or pirate-radio.")
    var wire: WireProtocol = .openjam

    @Option(help: "Simulated devices (PirateRadio sessions hold 10 members, the DJ included).")
    var devices: Int = 20

    @Option(help: "One-way delay each way, ms.")
    var delay: Double = 40

    @Option(help: "Uniform jitter of every chunk's delay, ± ms.")
    var jitter: Double = 20

    @Option(help: "Path asymmetry up − down, ms: device i gets a value spread evenly over ±this.")
    var asymmetry: Double = 0

    @Option(name: .customLong("delay-spread"), help: "Each device's base delay varies by up to ± this, ms.")
    var delaySpread: Double = 0

    @Option(name: .customLong("clock-offset"), help: "Each device's clock is off by up to ± this, ms.")
    var clockOffset: Double = 5_000

    @Option(help: "Seconds of clock sync before the first start (default 120: the drift is fitted and the offset filter full).")
    var warmup: Double?

    @Option(help: "Rounds of play, skip, auto-advance and join.")
    var rounds: Int?

    @Option(help: "Devices joining mid-song in each round.")
    var joiners: Int?

    @Option(name: .customLong("burst-size"), help: "What-if (OpenJam): pings per burst instead of ClockSync's default 24.")
    var burstSize: Int?

    @Option(name: .customLong("filter-bursts"), help: "What-if (OpenJam): bursts whose samples give the offset instead of the default 8.")
    var filterBursts: Int?

    @Flag(name: .customLong("per-device"), help: "Print each device's steady offset error, its fitted drift and what its samples allow.")
    var perDevice = false

    @Option(
        name: .customLong("output-latency"),
        help: "Devices' output latencies are spread evenly over 0…this, ms (a Bluetooth speaker: 100–300); positions are measured as heard.")
    var outputLatency: Double = 200

    @Option(name: .customLong("clock-drift"), help: "Devices' clocks run fast or slow by up to ± this, ppm (spread evenly).")
    var clockDrift: Double = 50

    /// Validates the options, runs the devices and prints the report.
    func run() async throws {
        let wire = self.wire
        guard (1...200).contains(devices) else { throw ValidationError("--devices must be 1…200") }
        guard delay >= 0, jitter >= 0, jitter <= 1_000, delay <= 2_000 else { throw ValidationError("--delay and --jitter must be 0…2000 ms") }
        guard (0...1_000).contains(outputLatency) else { throw ValidationError("--output-latency must be 0…1000 ms") }
        guard (0...500).contains(clockDrift) else { throw ValidationError("--clock-drift must be 0…500 ppm") }
        var deviceCount = common.smoke ? min(devices, 3) : devices
        var joinerCount = joiners ?? (common.smoke ? 1 : 5)
        let roundCount = max(1, min(rounds ?? (common.smoke ? 1 : 2), 10))
        let warmupSeconds = max(0, min(warmup ?? (common.smoke ? 0.5 : 120), 300))
        try await common.awaitQuietMachine()
        var report = Report(bench: "sync")
        if wire == .pirateRadio {
            // PirateRadio admits 10 sockets per session: the DJ, the devices and the joiners of a round.
            joinerCount = min(joinerCount, 2)
            let capped = min(deviceCount, 9 - joinerCount)
            if capped < deviceCount { report.note("PirateRadio sessions hold 10 members: \(capped) devices + \(joinerCount) joiners + the DJ (asked for \(deviceCount))") }
            deviceCount = capped
        }

        let (server, jam) = try await common.startServer(wire)
        report.describe(server: server, jam: jam, wire: wire)
        report.set("devices", "\(deviceCount)")
        report.set("path", "\(Int(delay)) ± \(Int(jitter)) ms, asymmetry ±\(Int(asymmetry)) ms")
        report.set("output latency", "0…\(Int(outputLatency)) ms across devices; every position is measured as heard")
        report.set("clock drift", "±\(Int(clockDrift)) ppm across devices")
        report.set("rounds", "\(roundCount) × (play, skip, auto-advance, \(joinerCount) joiners)")
        do {
            try await measure(server: server, wire: wire, deviceCount: deviceCount, joinerCount: joinerCount, rounds: roundCount, warmupSeconds: warmupSeconds, into: &report)
        } catch {
            report.fail("the run stopped: \(error)")
        }
        if let failure = server.deathNotice() { report.fail(failure) }
        await server.stop(keepData: common.keepData)
        try common.finish(report)
    }

    /// Sets the devices up, synchronises them, runs the rounds and fills the report.
    private func measure(
        server: ServerUnderTest, wire: WireProtocol, deviceCount: Int, joinerCount: Int, rounds: Int, warmupSeconds: Double, into report: inout Report
    ) async throws {
        let group = BenchLoops.group
        let http = LoopbackHTTP(group: group, host: server.host, port: server.port)
        let driver: any SyncDriver = switch wire {
        case .openjam:
            try await OpenJamSyncDriver.make(
                rest: OpenJamREST(http: http), server: server, group: group, capacity: deviceCount + rounds * joinerCount + 2, clockConfiguration: tuning(&report))
        case .pirateRadio:
            try await PirateRadioSyncDriver.make(rest: PirateRadioREST(http: http), server: server, group: group)
        }
        var random = SeededRandom(seed: common.seed)
        let asymmetry = self.asymmetry, delay = self.delay, jitter = self.jitter, spread = delaySpread, offsetRange = clockOffset
        let maxLatency = outputLatency, maxDrift = clockDrift
        /// Device `index`'s clock drift: spread evenly over ±max.
        @Sendable func drift(_ index: Int, of count: Int) -> Double {
            count > 1 ? -maxDrift + 2 * maxDrift * Double(index) / Double(count - 1) : maxDrift
        }
        /// Device `index`'s output latency: spread evenly over 0…max, so the room holds the extremes.
        @Sendable func latency(_ index: Int, of count: Int) -> Double {
            count > 1 ? maxLatency * Double(index) / Double(count - 1) : maxLatency
        }
        /// Device `index`'s path: asymmetry spread evenly over the devices, base delay varied by the spread.
        @Sendable func shape(_ index: Int, of count: Int, _ random: inout SeededRandom) -> PathShape {
            let asym = count > 1 ? -asymmetry + 2 * asymmetry * Double(index) / Double(count - 1) : asymmetry
            let base = delay + (spread > 0 ? Double.random(in: -spread...spread, using: &random) : 0)
            return PathShape(delayMs: base, jitterMs: jitter, asymmetryMs: asym)
        }
        let measurements = SyncMeasurements()
        Console.line("sync: setting up \(deviceCount) devices behind proxies…")
        var made: [SimulatedDevice] = []
        for index in 0..<deviceCount {
            let offset = offsetRange > 0 ? Double.random(in: -offsetRange...offsetRange, using: &random) : 0
            made.append(try await driver.makeDevice(
                name: "device \(index)", shape: shape(index, of: deviceCount, &random), clockOffsetMs: offset,
                clockDriftPpm: drift(index, of: deviceCount),
                outputLatencyMs: latency(index, of: deviceCount), seed: UInt64(index + 1) &* 7919))
        }
        let devices = made
        let joinerSeed = common.seed
        let scenario = SyncScenario(
            driver: driver, devices: devices, measurements: measurements, rounds: rounds, joiners: joinerCount,
            advancingTrackMs: common.smoke ? 2_500 : 6_000, joinedTrackMs: common.smoke ? 3_000 : 4_000,
            shapeForJoiner: { number in
                var random = SeededRandom(seed: joinerSeed &+ UInt64(number))
                return shape(number % max(1, deviceCount), of: max(1, deviceCount), &random)
            },
            outputLatencyForJoiner: { number in latency(number % 5, of: 5) },
            driftForJoiner: { number in drift(number % 5, of: 5) },
            offsetForJoiner: { number in
                var random = SeededRandom(seed: joinerSeed &+ 1000 &+ UInt64(number))
                return offsetRange > 0 ? Double.random(in: -offsetRange...offsetRange, using: &random) : 0
            })
        let samplers = SyncSamplers(driver: driver, devices: devices, measurements: measurements, asymmetric: asymmetry != 0)
        let started = MonoTime.seconds()
        let usage = CPUUsage.start(server: server)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            // Errors of tasks cancelled at the end are not collected; failures before are recorded.
            tasks.addTask {
                do {
                    try await driver.runConnection()
                    await measurements.deviceEnded("the host", nil)
                } catch {
                    await measurements.deviceEnded("the host", error)
                }
            }
            for device in devices {
                tasks.addTask {
                    do {
                        try await device.run()
                        await measurements.deviceEnded(device.name, nil)
                    } catch {
                        await measurements.deviceEnded(device.name, error)
                    }
                }
            }
            try await waitFor("every device's first clock estimate", timeout: .seconds(30)) { () async -> Bool? in
                for device in devices where await device.clockSync.estimate == nil { return nil }
                return true
            }
            tasks.addTask { await samplers.sampleOffsets() }
            tasks.addTask { await samplers.samplePlayback() }
            Console.line("sync: devices synchronised; warming up \(Int(warmupSeconds)) s…")
            try await Task.sleep(for: .milliseconds(Int64(warmupSeconds * 1000)))
            Console.line("sync: \(rounds) rounds of play, skip, auto-advance and join…")
            try await scenario.run()
            await measurements.finish()
            tasks.cancelAll()
        }
        for device in devices { await device.proxy.close() }
        usage.report(into: &report, prefix: "run")
        try await summarise(measurements, devices: devices, seconds: MonoTime.seconds() - started, into: &report)
    }

    /// The what-if clock-sync knobs the options ask for, noted in the report; nil for Participant's defaults.
    private func tuning(_ report: inout Report) -> ClockSync.Configuration? {
        guard burstSize != nil || filterBursts != nil else { return nil }
        var configuration = ClockSync.Configuration()
        if let burstSize { configuration.burstSize = max(1, min(burstSize, 64)) }
        if let filterBursts { configuration.filterBursts = max(1, min(filterBursts, 16)) }
        report.set("what-if", "burst \(configuration.burstSize) pings, filter \(configuration.filterBursts) bursts")
        return configuration
    }

    /// Turns the measurements into figures, with the targets where the project set them.
    private func summarise(_ m: SyncMeasurements, devices: [SimulatedDevice], seconds: Double, into report: inout Report) async throws {
        let byBursts = await m.offsetByBursts
        let smoke = common.smoke
        let symmetric = asymmetry == 0
        report.add(.distribution("offset_error_first_burst_ms", "clock offset error, first burst arriving", byBursts[0]), optional: false)
        report.add(.distribution("offset_error_1_burst_ms", "clock offset error, 1 burst", byBursts[1]), optional: smoke)
        report.add(.distribution("offset_error_2_bursts_ms", "clock offset error, 2 bursts", byBursts[2]), optional: true)
        report.add(.distribution("offset_error_3_bursts_ms", "clock offset error, 3+ bursts, before steady", byBursts[3]), optional: smoke)
        report.add(
            .distribution(
                "offset_error_steady_ms", "clock offset error, 1½ min+ after the first estimate (steady: drift fitted)", byBursts[4],
                target: symmetric ? .atMost(1, .p99, "≤ 1 ms p99") : nil),
            optional: smoke)
        report.add(
            .distribution(
                "offset_error_window_full_ms", "clock offset error, \(Int(SyncMeasurements.windowMs / 60_000)) min+ after the first estimate (drift window full; --warmup 270)",
                await m.offsetWindowFull),
            optional: true)
        let byDevice = await m.steadyOffsetByDevice
        if let worst = byDevice.max(by: { $0.value.p99 < $1.value.p99 }) {
            let means = byDevice.values.map(\.mean)
            report.add(.distribution("offset_error_steady_worst_device_ms", "clock offset error, steady, worst device (\(worst.key))", worst.value), optional: true)
            report.add(
                .value("offset_bias_spread_ms", "clock offset error, steady: spread of the devices' mean errors", (means.max() ?? 0) - (means.min() ?? 0), unit: "ms"),
                optional: true)
            if perDevice { await OffsetDiagnosis.print(devices: devices, steady: byDevice) }
        }
        if !symmetric {
            report.add(
                .distribution("offset_error_beyond_asymmetry_ms", "offset error beyond |asymmetry|/2, 3+ bursts", await m.offsetBeyondAsymmetry,
                    target: .atMost(1, .p99, "≤ 1 ms p99")),
                optional: smoke)
        }
        let errors = await m.startError
        let skews = await m.startSkew
        let late = await m.lateStart
        for kind in ["play", "skip", "auto-advance", "join"] {
            report.add(.distribution("start_error_\(kind)_ms", "start error vs timeline, \(kind)", errors[kind] ?? Distribution()))
            report.add(.distribution("start_skew_\(kind)_ms", kind == "join" ? "joiner vs room median, join" : "start skew across devices, \(kind)", skews[kind] ?? Distribution()), optional: devices.count < 2)
            if kind != "join" {
                report.add(.distribution("late_start_\(kind)_ms", "heard only after the announced instant, \(kind)", late[kind] ?? Distribution()), optional: true)
            }
        }
        // Path asymmetry is invisible to any round-trip sync: with asymmetric paths the skew shows its cost, not a defect.
        report.add(
            .distribution("start_skew_ms", "start skew as heard, all starts and joins", await m.allStartSkew, target: symmetric ? .atMost(2, .p99, "≤ 2 ms p99") : nil),
            optional: devices.count < 2)
        report.add(.distribution("steady_error_ms", "playback error between starts", await m.steadyError), optional: true)
        report.add(.distribution("steady_skew_ms", "playback skew between starts", await m.steadySkew), optional: true)
        var inconsistent = 0, rejected = 0
        for device in devices {
            inconsistent += await device.clockSync.inconsistentBursts
            rejected += await device.clockSync.rejectedSamples
        }
        report.add(.value("clock_bursts_dropped", "ping bursts dropped as inconsistent", Double(inconsistent), unit: "bursts"))
        report.add(.value("clock_samples_rejected", "ping samples rejected", Double(rejected), unit: "samples"))
        report.add(.value("run_seconds", "measured for", seconds, unit: "s"))
        for failure in await m.failures { report.fail(failure) }
        if smoke {
            // A smoke run on a debug build proves the plumbing, not the figures: only gross breakage fails it.
            let first = byBursts[1].count > 0 ? byBursts[1] : byBursts[0]
            if first.count > 0, first.p99 > 50 { report.fail("clock offset error p99 \(Report.ms(first.p99)) after one burst: the sync is broken") }
            let skew = await m.allStartSkew
            if skew.count > 0, skew.p99 > 100 { report.fail("start skew p99 \(Report.ms(skew.p99)): the start is broken") }
        }
    }
}
