import Foundation
import JamProtocol
import Testing

@testable import JamClient

/// A room calibration from a playing device's side: its probes sound so they are heard at
/// the plan's server instants, as its music is, through the same output path.
struct SyncEngineCalibrationTests {
    static let me = DeviceRef(userId: "host", deviceId: "phone-1")

    func plan(_ id: String = "cal-1", for device: DeviceRef, at atMs: Double) -> CalibrationPlan {
        CalibrationPlan(
            id: id, listener: DeviceRef(userId: "guest", deviceId: "laptop"),
            probes: [CalibrationProbe(userId: "guest", deviceId: "laptop", atMs: atMs - 1_400), CalibrationProbe(userId: device.userId, deviceId: device.deviceId, atMs: atMs)],
            probeMs: CalibrationRules.probeMs, windowMs: CalibrationRules.windowMs)
    }

    @Test("a plan listing this device sounds its three probes so they are heard at its instants, output latency and delay included")
    func probesAreHeardAtTheAnnouncedInstants() async {
        // The route reports 100 ms, has 150: the 50 ms device delay makes up the rest.
        let rig = await EngineRig(player: .init(outputLatencyMs: 150, reportedOutputLatencyMs: 100), device: Self.me)
        await rig.handle(.deviceDelay(DeviceDelay(userId: "host", deviceId: "phone-1", delayMs: 50)))
        let atMs = rig.serverNow + 3_000
        await rig.handle(.calibration(plan(for: Self.me, at: atMs)))
        let heard = await rig.player.probesHeard
        let expected = (0..<CalibrationRules.repeats).map { atMs - rig.offset + Double($0) * CalibrationRules.repeatMs }
        #expect(heard.count == 3)
        for (got, want) in zip(heard, expected) { #expect(abs(got - want) < 0.01, "heard at \(got), announced \(want)") }
        #expect(await rig.engine.status.calibrationProbes == 1)
    }

    @Test("a plan for other devices, the same plan again, or a player without a clock yet sounds nothing")
    func onlyThisDevicesTurnSoundsOnce() async {
        let rig = await EngineRig(device: Self.me)
        await rig.handle(.calibration(plan(for: DeviceRef(userId: "host", deviceId: "tablet"), at: rig.serverNow + 3_000)))
        #expect(await rig.player.probesHeard.isEmpty)

        let mine = plan(for: Self.me, at: rig.serverNow + 3_000)
        await rig.handle(.calibration(mine))
        await rig.handle(.calibration(mine)) // a resumed socket hands it in again
        #expect(await rig.player.probesHeard.count == CalibrationRules.repeats)

        let unsynced = await EngineRig(synchronised: false, device: Self.me)
        await unsynced.handle(.calibration(plan("cal-2", for: Self.me, at: unsynced.serverNow + 3_000)))
        #expect(await unsynced.player.probesHeard.isEmpty)
        #expect(await unsynced.engine.status.calibrationProbes == 0)
    }

    @Test("a plan whose probe moment is past, or too near for the player, sounds nothing rather than a late probe")
    func aLateProbeIsNotPlayed() async {
        let rig = await EngineRig(player: .init(outputLatencyMs: 100), device: Self.me)
        // Heard 100 ms from now means leaving the player now: too late to be on time.
        await rig.handle(.calibration(plan("cal-1", for: Self.me, at: rig.serverNow + 100 + CalibrationRules.minimumProbeLeadMs - 1)))
        await rig.handle(.calibration(plan("cal-2", for: Self.me, at: rig.serverNow - 100)))
        #expect(await rig.player.probesHeard.isEmpty)
        #expect(await rig.engine.status.calibrationProbes == 0)
        await rig.handle(.calibration(plan("cal-3", for: Self.me, at: rig.serverNow + 100 + CalibrationRules.minimumProbeLeadMs)))
        #expect(await rig.player.probesHeard.count == CalibrationRules.repeats)
    }

    @Test("the probe is an 80 ms chirp with faded edges and a 0.9 peak, at any sample rate")
    func probeSignalShape() {
        for rate in [44_100.0, 48_000.0] {
            let probe = ProbeSignal.samples(sampleRate: rate)
            #expect(probe.count == Int((0.08 * rate).rounded()))
            #expect(probe.first == 0)
            let peak = probe.map { abs($0) }.max() ?? 0
            #expect(peak > 0.85 && peak <= 0.9)
            // Faded: the first millisecond stays well under the peak.
            #expect(probe.prefix(Int(rate / 1000)).allSatisfy { abs($0) < 0.2 })
        }
    }
}
