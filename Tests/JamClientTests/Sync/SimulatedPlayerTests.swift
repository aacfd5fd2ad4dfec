import JamProtocol
import Testing

@testable import JamClient

@Suite("SimulatedPlayer")
struct SimulatedPlayerTests {
    let clock = ManualClock(10_000)

    func player(_ configuration: SimulatedPlayer.Configuration = .init()) -> SimulatedPlayer {
        SimulatedPlayer(clock: clock, sleeper: AdvancingSleeper(clock: clock), configuration: configuration)
    }

    @Test("loading takes the configured delay in virtual time and leaves the track paused at 0")
    func loadDelay() async throws {
        let p = player(.init(loadDelayMs: 300))
        try await p.load(Fixture.track("a"))
        #expect(clock.now() == 10_300)
        #expect(await p.loadedTrackId == "a")
        #expect(await p.isPlaying == false)
        #expect(await p.position(atLocal: clock.now()) == 0)
        #expect(await p.calls == [.load(trackId: "a", at: 10_000), .loaded(trackId: "a", at: 10_300)])
        let failing = player(.init(failingTrackIds: ["b"]))
        await #expect(throws: SimulatedPlayer.LoadFailed.self) { try await failing.load(Fixture.track("b")) }
        #expect(await failing.loadedTrackId == nil)
    }

    @Test("a play for a future instant keeps the old course until then; one in the past starts at the advanced position")
    func scheduledStart() async throws {
        let p = player(.init(startLatencyMs: 40))
        try await p.load(Fixture.track("a"))
        await p.play(from: 1_000, atLocal: 10_500)
        #expect(await p.truePosition(atLocal: 10_499) == 0)
        #expect(await p.truePosition(atLocal: 11_500) == 2_000)
        // Later: a new course starting in the past. It cannot begin before now + 40 ms.
        clock.advance(by: 5_000) // now 15_000
        await p.play(from: 50_000, atLocal: 14_000)
        #expect(await p.truePosition(atLocal: 15_039) == 1_000 + 4_539) // still the old course
        #expect(await p.truePosition(atLocal: 15_040) == 51_040)
        #expect(await p.truePosition(atLocal: 16_000) == 52_000)
    }

    @Test("a seek lands after its latency; until then the old course is reported")
    func seekLatency() async throws {
        let p = player(.init(seekLatencyMs: 120))
        try await p.load(Fixture.track("a"))
        await p.play(from: 0, atLocal: clock.now())
        clock.advance(by: 1_000)
        await p.seek(to: 90_000)
        #expect(await p.position(atLocal: clock.now() + 119) == 1_119)
        #expect(await p.position(atLocal: clock.now() + 120) == 90_000)
        #expect(await p.position(atLocal: clock.now() + 1_120) == 91_000)
    }

    @Test("the audio clock error and the rate change how fast the position advances")
    func rates() async throws {
        let p = player(.init(clockRateErrorPpm: 200))
        try await p.load(Fixture.track("a"))
        await p.play(from: 0, atLocal: clock.now())
        let start = clock.now()
        #expect(abs(await p.truePosition(atLocal: start + 10_000)! - 10_002) < 1e-9)
        clock.advance(by: 10_000)
        await p.setRate(0.95)
        let expected = 10_002 + 1_000 * 0.95 * 1.0002
        #expect(abs(await p.truePosition(atLocal: start + 11_000)! - expected) < 1e-9)
        await p.pause()
        clock.advance(by: 5_000)
        #expect(await p.isPlaying == false)
        #expect(abs(await p.truePosition(atLocal: clock.now())! - 10_002) < 1e-9)
    }

    @Test("a stall puts the audio behind its course from that instant")
    func stall() async throws {
        let p = player()
        try await p.load(Fixture.track("a"))
        await p.play(from: 0, atLocal: clock.now())
        clock.advance(by: 2_000)
        await p.stall(ms: 300)
        #expect(await p.truePosition(atLocal: clock.now()) == 1_700)
        #expect(await p.truePosition(atLocal: clock.now() + 1_000) == 2_700)
    }

    @Test("the position stops at the track's end and the player stops playing")
    func endOfTrack() async throws {
        let p = player()
        try await p.load(Fixture.track("a", durationMs: 5_000))
        await p.play(from: 4_000, atLocal: clock.now())
        clock.advance(by: 2_000)
        #expect(await p.truePosition(atLocal: clock.now()) == 5_000)
        #expect(await p.isPlaying == false)
    }
}
