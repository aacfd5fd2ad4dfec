import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Testing

/// Devices with a (simulated) player against a real server: they start together and a
/// late joiner lands at the right position. Server and devices share this machine's
/// clock, so the true server time is known and errors can be measured.
@Suite(.serialized) struct PlayAlongTests {
    struct Device: Sendable {
        let participant: Participant
        let player: SimulatedPlayer
        let clock: SystemMonotonicClock
        let me: UserID

        static func join(_ server: TestServer, name: String, code: String, deviceId: String? = nil) async throws -> Device {
            var api = JamAPI(server: URL(string: server.baseURL)!)
            let identity = try await api.signIn(displayName: name)
            let view = try await api.join(code: code)
            let clock = SystemMonotonicClock()
            let player = SimulatedPlayer(clock: clock, sleeper: TaskSleeper(), configuration: .init(loadDelayMs: 30, startLatencyMs: 0))
            let participant = Participant(
                api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(), player: player, deviceId: deviceId, clock: clock)
            return Device(participant: participant, player: player, clock: clock, me: identity.userId)
        }

        /// How far the player is from where the server's timeline says it should be, now.
        func error(against nowPlaying: NowPlaying) async -> Double? {
            let local = clock.now()
            let wall = Date().timeIntervalSince1970 * 1000
            guard let position = await player.truePosition(atLocal: local) else { return nil }
            let expected = Double(nowPlaying.positionMs) + (wall - Double(nowPlaying.anchorMs))
            return position - expected
        }
    }

    /// Waits until `device` plays, then gives its engine up to eight seconds to bring the
    /// error within its clock's bound: a start delayed by a busy machine is corrected by
    /// rate over a two-second horizon, and on a machine running every suite at once the
    /// clock's estimate itself can still move by tens of ms after the start, which starts
    /// another such correction. Returns the error at the start and at the end, and the
    /// clock's own error bound: a device can follow the server no better than it knows its time.
    func settledError(_ device: Device, host: AppMember, timeout: Duration = .seconds(20)) async throws -> (start: Double, settled: Double, bound: Double) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let now = await host.store.current.nowPlaying, now.state == .playing, await device.player.isPlaying,
               let first = await device.error(against: now) {
                var latest = first
                var bound = await device.participant.clockSync.errorBoundMs ?? .infinity
                // Settled means within what the callers accept: the clock's bound plus 3 ms for the player.
                let settleBy = ContinuousClock.now + .seconds(8)
                while abs(latest) > bound + 3 && ContinuousClock.now < settleBy {
                    try await Task.sleep(for: .milliseconds(100))
                    latest = await device.error(against: now) ?? latest
                    bound = await device.participant.clockSync.errorBoundMs ?? .infinity
                }
                return (first, latest, bound)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("the device never started playing")
    }

    @Test("each pong is a clock sample once, taken as it arrives")
    func eachPongIsAClockSampleOnce() async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana")
            let device = try await Device.join(server, name: "Ines", code: created.session.joinCode)
            try await running([host]) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await device.participant.run() }
                    let clockSync = device.participant.clockSync
                    // A ping or two go out before the socket counts as connected, and the clock
                    // starts over then: their pongs are ignored. Count from inside the first burst.
                    try await eventually("clock samples", timeout: .seconds(30)) { await clockSync.acceptedSamples >= 8 }
                    let ignored = await clockSync.ignoredPongs
                    try await eventually("more clock samples", timeout: .seconds(30)) { await clockSync.acceptedSamples >= 32 }
                    let accepted = await clockSync.acceptedSamples, after = await clockSync.ignoredPongs
                    #expect(after == ignored, "\(after - ignored) of the pongs for \(accepted) samples were recorded twice")
                    group.cancelAll()
                }
            }
        }
    }

    @Test("devices start together and a late joiner lands on position")
    func devicesStartTogetherAndALateJoinerLandsOnPosition() async throws {
        try await TestServer.with(configure: { $0.timing.minLeadMs = 800 }) { server in
            let (host, created) = try await AppMember.make(server, name: "Hana")
            let early = try await Device.join(server, name: "Early", code: created.session.joinCode)
            let second = try await Device.join(server, name: "Second", code: created.session.joinCode)
            try await running([host]) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await early.participant.run() }
                    group.addTask { try await second.participant.run() }
                    // Let both clocks sync before the start is announced.
                    try await Task.sleep(for: .milliseconds(600))
                    await host.store.add(song(1, durationMs: 120_000))
                    let early1 = try await settledError(early, host: host)
                    let second1 = try await settledError(second, host: host)
                    let skew = abs(early1.settled - second1.settled)
                    print("play-along: start errors \(String(format: "%.2f", early1.start)) and \(String(format: "%.2f", second1.start)) ms, settled \(String(format: "%.2f", early1.settled)) and \(String(format: "%.2f", second1.settled)) ms (clock bounds ±\(String(format: "%.1f", early1.bound)) and ±\(String(format: "%.1f", second1.bound)) ms), skew \(String(format: "%.2f", skew)) ms")
                    // Each device is where the server says, within what its clock can know (plus 3 ms for the player).
                    #expect(abs(early1.settled) <= early1.bound + 3)
                    #expect(abs(second1.settled) <= second1.bound + 3)
                    #expect(skew <= early1.bound + second1.bound + 3)

                    // A third device joins a second and a half into the song.
                    try await Task.sleep(for: .milliseconds(1500))
                    let late = try await Device.join(server, name: "Late", code: created.session.joinCode)
                    group.addTask { try await late.participant.run() }
                    let lateError = try await settledError(late, host: host)
                    let position = await late.player.truePosition(atLocal: late.clock.now()) ?? 0
                    print("play-along: late join at \(Int(position)) ms, error \(String(format: "%.2f", lateError.start)) ms at the start, \(String(format: "%.2f", lateError.settled)) ms settled (clock bound ±\(String(format: "%.1f", lateError.bound)) ms)")
                    #expect(position > 1500)
                    #expect(abs(lateError.settled) <= lateError.bound + 3)
                    group.cancelAll()
                }
            }
        }
    }

    @Test("a playing device sounds its calibration probes at the plan's instants")
    func aPlayingDeviceSoundsItsCalibrationProbesAtThePlansInstants() async throws {
        try await TestServer.with(configure: { $0.timing.minLeadMs = 800 }) { server in
            let (host, created) = try await AppMember.make(server, name: "Hana")
            let phone = try await Device.join(server, name: "Gil", code: created.session.joinCode, deviceId: "gil-phone")
            try await running([host]) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let frames = await host.client.subscribe()
                    group.addTask { try await phone.participant.run() }
                    try await Task.sleep(for: .milliseconds(600))
                    await host.store.add(song(1, durationMs: 120_000))
                    _ = try await settledError(phone, host: host)
                    // The host calibrates once the phone has reported that it plays; the
                    // host's own laptop, playing too, listens.
                    await host.client.post(.syncReport(SyncReport(
                        epoch: 1, offsetMs: 0, errorMs: 1, driftMs: 0, deviceId: "hana-laptop", outputLatencyMs: 10, delayMs: 0, clockDriftPpm: 0, playing: true)))
                    var plan: CalibrationPlan?
                    var asked = false
                    let deadline = ContinuousClock.now + .seconds(15)
                    for await update in frames {
                        guard ContinuousClock.now < deadline else { break }
                        guard case .envelope(let envelope) = update else { continue }
                        switch envelope.event {
                        case .syncStatus(let board) where !asked && board.devices.contains(where: { $0.deviceId == "gil-phone" && $0.playing }):
                            asked = true
                            await host.store.perform(.calibrate(Calibrate(userId: host.me, deviceId: "hana-laptop")), as: "calibrate")
                        case .calibration(let announced):
                            plan = announced
                        default:
                            break
                        }
                        if plan != nil { break }
                    }
                    let announced = try #require(plan, "no calibration plan reached the host")
                    let turn = try #require(announced.probes.first { $0.deviceId == "gil-phone" })
                    // The phone's probes, as heard, in server time: this machine's wall clock.
                    var heard: [Double] = []
                    while heard.count < announced.repeats, ContinuousClock.now < deadline {
                        heard = await phone.player.probesHeard
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    let wallMinusLocal = Date().timeIntervalSince1970 * 1000 - phone.clock.now()
                    let bound = await phone.participant.clockSync.errorBoundMs ?? .infinity
                    #expect(heard.count == announced.repeats)
                    for (index, local) in heard.enumerated() {
                        let error = local + wallMinusLocal - (turn.atMs + Double(index) * announced.repeatMs)
                        print("calibration: probe \(index) heard \(String(format: "%+.2f", error)) ms from its instant (clock bound ±\(String(format: "%.1f", bound)) ms)")
                        #expect(abs(error) <= bound + 2)
                    }
                    #expect(await phone.participant.engine?.status.calibrationProbes == 1)
                    group.cancelAll()
                }
            }
        }
    }

    @Test("a device falls silent when its member is removed, and when its run is cancelled; a new run plays on")
    func aDeviceFallsSilentWhenItsRunEnds() async throws {
        try await TestServer.with(configure: { $0.timing.minLeadMs = 800 }) { server in
            let (host, created) = try await AppMember.make(server, name: "Hana")
            let removed = try await Device.join(server, name: "Gil", code: created.session.joinCode)
            let cancelled = try await Device.join(server, name: "Ines", code: created.session.joinCode)
            try await running([host]) {
                let removedRun = Task { try await removed.participant.run() }
                let cancelledRun = Task { try await cancelled.participant.run() }
                try await Task.sleep(for: .milliseconds(600))
                await host.store.add(song(1, durationMs: 120_000))
                _ = try await settledError(removed, host: host)
                _ = try await settledError(cancelled, host: host)

                await host.store.perform(.kick(UserRef(userId: removed.me)), as: "remove")
                do {
                    try await removedRun.value
                    Issue.record("the removed member's run should end with an error")
                } catch {
                    #expect((error as? JamError)?.code == .forbidden, "\(error)")
                }
                #expect(await !removed.player.isPlaying, "a removed member's device plays on")

                cancelledRun.cancel()
                _ = await cancelledRun.result
                #expect(await !cancelled.player.isPlaying, "a device whose run was cancelled plays on")

                // Run again (a screen shown again), with nothing missed: the song plays on, on time.
                let again = Task { try await cancelled.participant.run() }
                defer { again.cancel() }
                let resumed = try await settledError(cancelled, host: host)
                #expect(abs(resumed.settled) <= resumed.bound + 3, "the new run plays \(resumed.settled) ms off")
            }
        }
    }
}
