import Foundation
import JamProtocol
import Testing

@testable import JamClient

/// What people hear is what counts: the engine schedules ahead by the player's output
/// latency and this device's delay, and measures the heard position against the timeline.
struct SyncEngineLatencyTests {
    static let me = DeviceRef(userId: "host", deviceId: "phone-1")

    /// The heard position minus where the timeline says it should be, now.
    func heardError(_ rig: EngineRig) async -> Double? {
        guard let timeline = await rig.engine.timeline, let heard = await rig.player.heardPosition(atLocal: rig.now) else { return nil }
        return heard - timeline.position(atServer: rig.serverNow)
    }

    @Test("a player reporting 150 ms of output latency is started 150 ms before the announced instant")
    func startsEarlyByTheOutputLatency() async {
        let rig = await EngineRig(player: .init(outputLatencyMs: 150))
        let startAt = rig.millis(rig.serverNow) + 2_000
        await rig.handle(.playPrepare(PlayPrepare(item: Fixture.item("a"), epoch: 1, startAt: startAt, previous: nil)))
        await rig.handle(.playCommit(PlayCommit(itemId: Fixture.item("a").id, epoch: 1, startAt: startAt, positionMs: 0)))
        let play = try! #require(await rig.playCalls.last)
        #expect(abs(play.atLocal - (rig.local(startAt) - 150)) < 0.001)
        rig.clock.advance(by: 2_500)
        let heard = try! #require(await heardError(rig))
        #expect(abs(heard) < 0.5, "heard \(heard) ms off the timeline")
    }

    @Test("with 150 ms of output latency the correction loop keeps the heard position on the timeline, not the player's")
    func correctionFollowsTheHeardPosition() async {
        let rig = await EngineRig(player: .init(startLatencyMs: 40, clockRateErrorPpm: 300, outputLatencyMs: 150))
        await rig.startPlaying(Fixture.item("a"))
        var worst = 0.0
        await rig.correct(forMs: 60_000) { _, _ in }
        for _ in 0..<40 {
            rig.clock.advance(by: 250)
            await rig.engine.correct()
            if let error = await heardError(rig) { worst = max(worst, abs(error)) }
        }
        #expect(worst < 4, "heard error reached \(worst) ms")
        #expect(await rig.engine.status.outputLatencyMs == 150)
        // The player itself runs ahead by the latency.
        let ahead = try! #require(await rig.trueError())
        #expect(abs(ahead - 150) < 4)
    }

    @Test("an unreported Bluetooth delay is heard late until the device's delay in the session makes up for it")
    func deviceDelayFromTheSessionMakesUpAnUnreportedLatency() async {
        let rig = await EngineRig(player: .init(outputLatencyMs: 220, reportedOutputLatencyMs: 20), device: Self.me)
        await rig.startPlaying(Fixture.item("a"))
        await rig.correct(forMs: 5_000)
        let before = try! #require(await heardError(rig))
        #expect(abs(before + 200) < 4, "heard \(before) ms off before the delay")
        await rig.engine.handle(Fixture.envelope(.deviceDelay(DeviceDelay(userId: "host", deviceId: "phone-1", delayMs: 200))))
        await rig.correct(forMs: 10_000)
        let after = try! #require(await heardError(rig))
        #expect(abs(after) < 4, "heard \(after) ms off after the delay")
        #expect(await rig.engine.status.deviceDelayMs == 200)
    }

    @Test("a stateSync carries this device's delay; another device's delay is not applied")
    func stateSyncCarriesOnlyThisDevicesDelay() async {
        let rig = await EngineRig(device: Self.me)
        let view = Fixture.view(nowPlaying: nil, deviceDelays: [
            DeviceDelay(userId: "host", deviceId: "laptop", delayMs: -50),
            DeviceDelay(userId: "host", deviceId: "phone-1", delayMs: 35.5),
        ])
        await rig.handle(.stateSync(view))
        #expect(await rig.engine.status.deviceDelayMs == 35.5)
        await rig.handle(.deviceDelay(DeviceDelay(userId: "other", deviceId: "phone-1", delayMs: 99)))
        #expect(await rig.engine.status.deviceDelayMs == 35.5)
    }

    @Test("reports name the device and carry its output latency, delay, clock drift and whether it plays")
    func reportsCarryTheDeviceFigures() async {
        let rig = await EngineRig(player: .init(outputLatencyMs: 150), device: Self.me)
        await rig.startPlaying(Fixture.item("a"))
        await rig.handle(.deviceDelay(DeviceDelay(userId: "host", deviceId: "phone-1", delayMs: 12)))
        #expect(await rig.engine.report())
        let report = try! #require(rig.sent.reports.last?.report)
        #expect(report.deviceId == "phone-1")
        #expect(report.outputLatencyMs == 150)
        #expect(report.delayMs == 12)
        #expect(report.playing == true)
        #expect(report.clockDriftPpm?.isFinite == true)
        try! report.validate()
    }

    @Test("a player whose position is not a number is not measured, and its reports stay valid")
    func aPositionThatIsNotANumberIsNotMeasured() async {
        let rig = await EngineRig(device: Self.me, playerSeen: { InvalidPositionPlayer($0) })
        await rig.startPlaying(Fixture.item("a"))
        await rig.correct(forMs: 2_000)
        #expect(await rig.engine.status.lastErrorMs == nil)
        #expect(await rig.engine.status.measurements == 0)
        #expect(await rig.seekCalls == 0, "no correction chases a position nobody knows")
        #expect(await rig.engine.report())
        let report = try! #require(rig.sent.reports.last?.report)
        #expect(throws: Never.self) { try ClientCommand.syncReport(report).validate() }
    }

    @Test("the first report, sent before anything plays, already carries the output latency")
    func firstReportCarriesTheLatencyBeforeAnythingPlays() async {
        let rig = await EngineRig(player: .init(outputLatencyMs: 180), device: Self.me)
        #expect(await rig.engine.report())
        #expect(rig.sent.reports.last?.report.outputLatencyMs == 180)
        #expect(rig.sent.reports.last?.report.playing == false)
    }

    @Test("a route reporting more latency than the protocol takes is reported at the most, and still compensated in full")
    func aLatencyBeyondTheProtocolsLimitIsReportedAtItsLimit() async {
        let rig = await EngineRig(player: .init(outputLatencyMs: 2_300), device: Self.me)
        #expect(await rig.engine.report())
        let report = try! #require(rig.sent.reports.last?.report)
        #expect(report.outputLatencyMs == Validate.maxDeviceDelayMs)
        #expect(throws: Never.self) { try ClientCommand.syncReport(report).validate() }
        #expect(await rig.engine.status.outputLatencyMs == 2_300, "the player is still started 2.3 s early")
    }

    @Test("a host's resync for this device measures the clock afresh and starts the player again")
    func resyncRestartsClockAndPlayer() async {
        let rig = await EngineRig(device: Self.me)
        await rig.startPlaying(Fixture.item("a"))
        let startsBefore = await rig.engine.status.starts
        await rig.handle(.resync(Resync(userId: "host", deviceId: "laptop")))
        #expect(await rig.engine.status.resyncs == 0, "a resync for another device is ignored")
        await rig.handle(.resync(Resync(userId: "host", deviceId: "phone-1")))
        #expect(await rig.engine.status.resyncs == 1)
        #expect(await rig.sync.estimate == nil, "the old clock samples are gone")
        // One answer gives an estimate, its roughest: the restart waits for the whole burst.
        let ping = await rig.sync.makePing()
        let t1 = ping.clientSendTime + 10 + rig.offset
        await rig.sync.record(Pong(clientSendTime: ping.clientSendTime, serverReceiveTime: t1, serverSendTime: t1), receivedAt: ping.clientSendTime + 20)
        rig.clock.advance(by: 25)
        await rig.engine.correct()
        #expect(await rig.sync.estimate != nil)
        #expect(await rig.engine.status.starts == startsBefore, "not restarted on one sample")
        #expect(await rig.engine.status.phase == .waitingForClock)
        await rig.synchronise()
        await rig.engine.correct()
        #expect(await rig.engine.status.starts == startsBefore + 1)
    }

    @Test("a host's resync that comes while the player is being started still starts it again on the new clock")
    func resyncDuringAStartIsNotLost() async {
        let rig = await EngineRig(device: Self.me)
        let player = HeldStartPlayer(rig.player)
        let sent = rig.sent
        let engine = SyncEngine(player: player, clockSync: rig.sync, clock: rig.clock, send: { sent.append($0) }, device: Self.me)
        let item = Fixture.item("a")
        let now = rig.millis(rig.serverNow)
        await engine.handle(Fixture.envelope(.stateSync(Fixture.view(
            nowPlaying: NowPlaying(item: item, epoch: 5, state: .playing, positionMs: 0, anchorMs: now)))))
        rig.clock.advance(by: 1_000)
        #expect(await engine.status.starts == 1)
        // A seek starts the player afresh; the resync arrives while that start is under way.
        await player.holdNextPlay()
        async let seeking: Void = engine.handle(Fixture.envelope(.seek(TimelineChange(epoch: 5, positionMs: 30_000, atMs: rig.millis(rig.serverNow)))))
        await player.whenHeld()
        await engine.take(Fixture.envelope(.resync(Resync(userId: "host", deviceId: "phone-1"))))
        await player.release()
        await seeking
        #expect(await engine.status.starts == 2)
        #expect(await engine.status.phase == .waitingForClock)
        await rig.synchronise()
        await engine.correct()
        #expect(await engine.status.starts == 3, "the start timed on the old clock passed for the one the resync asked for")
    }
}

/// A simulated player whose next `play` waits, once asked to, until released: a start under way.
actor HeldStartPlayer: Player {
    let inner: SimulatedPlayer
    private var holdNext = false
    private var held: CheckedContinuation<Void, Never>?
    private var waitingForHold: [CheckedContinuation<Void, Never>] = []

    init(_ inner: SimulatedPlayer) { self.inner = inner }

    func holdNextPlay() { holdNext = true }

    /// Returns once a `play` is being held.
    func whenHeld() async {
        if held != nil { return }
        await withCheckedContinuation { waitingForHold.append($0) }
    }

    func release() {
        held?.resume()
        held = nil
    }

    func play(from positionMs: Double, atLocal: Double) async {
        if holdNext {
            holdNext = false
            await withCheckedContinuation { continuation in
                held = continuation
                for waiter in waitingForHold { waiter.resume() }
                waitingForHold = []
            }
        }
        await inner.play(from: positionMs, atLocal: atLocal)
    }

    func load(_ track: Track) async throws { try await inner.load(track) }
    func pause() async { await inner.pause() }
    func seek(to positionMs: Double) async { await inner.seek(to: positionMs) }
    func setRate(_ rate: Double) async { await inner.setRate(rate) }
    func position(atLocal: Double) async -> Double? { await inner.position(atLocal: atLocal) }
    var loadedTrackId: String? { get async { await inner.loadedTrackId } }
    var isPlaying: Bool { get async { await inner.isPlaying } }
    var outputLatencyMs: Double { get async { await inner.outputLatencyMs } }
}

/// A simulated player whose position reads as not a number, as AVPlayer's does while its time is invalid.
actor InvalidPositionPlayer: Player {
    let inner: SimulatedPlayer

    init(_ inner: SimulatedPlayer) { self.inner = inner }

    func play(from positionMs: Double, atLocal: Double) async { await inner.play(from: positionMs, atLocal: atLocal) }
    func load(_ track: Track) async throws { try await inner.load(track) }
    func pause() async { await inner.pause() }
    func seek(to positionMs: Double) async { await inner.seek(to: positionMs) }
    func setRate(_ rate: Double) async { await inner.setRate(rate) }
    func position(atLocal: Double) async -> Double? { .nan }
    var loadedTrackId: String? { get async { await inner.loadedTrackId } }
    var isPlaying: Bool { get async { await inner.isPlaying } }
    var outputLatencyMs: Double { get async { await inner.outputLatencyMs } }
}
