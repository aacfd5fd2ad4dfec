import Testing
import JamCore
import JamProtocol

struct UnattendedTests {
    static let pauseAfter: Millis = 10 * 60_000
    static let endAfter: Millis = 3 * 3_600_000
    static let timing = Timing(unattendedPauseMs: pauseAfter, abandonAfterMs: endAfter)

    /// Track 1 (a stream without an end) plays from `now`, everybody connected.
    func playing() throws -> Jam {
        var jam = try Jam(timing: Self.timing)
        try jam.startPlaying(1, durationMs: nil)
        return jam
    }

    /// Everybody's socket closes at `now`.
    func disconnectEverybody(_ jam: inout Jam) throws {
        for member in [host, alice, bob] { try jam.apply(.disconnect, by: member) }
    }

    @Test func whileAnyoneIsConnectedNothingPausesOrEnds() throws {
        var jam = try playing()
        try jam.apply(.disconnect, by: alice)
        try jam.apply(.disconnect, by: bob)
        #expect(jam.state.unattendedSince == nil)
        jam.wait(Self.endAfter + 1)
        #expect(jam.state.current?.state == .playing)
        #expect(!jam.state.hasEnded)
    }

    @Test func playbackPausesWhereItStoodOnceNobodyWasConnectedForTheWhile() throws {
        var jam = try playing()
        let start = jam.now
        jam.wait(60_000)
        try disconnectEverybody(&jam)
        let left = jam.now
        #expect(jam.state.unattendedSince == left)
        #expect(jam.state.nextDeadline() == left + Self.pauseAfter)
        #expect(jam.advance(to: left + Self.pauseAfter - 1).isEmpty)
        let events = jam.advance(to: left + Self.pauseAfter)
        #expect(events.types == [.pause])
        let pause = try #require(events.first?.event.pause)
        #expect(pause.positionMs == left + Self.pauseAfter - start)
        #expect(jam.state.current?.state == .paused)
        // Paused, it only waits for the end of the session now.
        #expect(jam.state.nextDeadline() == left + Self.endAfter)
    }

    @Test func aPauseDueDuringAnOutageHoldsThePositionOfItsOwnInstant() throws {
        var jam = try playing()
        let start = jam.now
        try disconnectEverybody(&jam)
        // The server was down; it catches up an hour after the pause was due.
        let events = jam.advance(to: start + Self.pauseAfter + 3_600_000)
        #expect(events.types == [.pause])
        #expect(events.first?.event.pause?.positionMs == Self.pauseAfter)
    }

    @Test func aMemberComingBackStopsTheClockAndTheSessionPlaysOn() throws {
        var jam = try playing()
        try disconnectEverybody(&jam)
        jam.wait(Self.pauseAfter - 1)
        try jam.apply(.connect, by: alice)
        #expect(jam.state.unattendedSince == nil)
        jam.wait(Self.endAfter)
        #expect(jam.state.current?.state == .playing)
        #expect(!jam.state.hasEnded)
    }

    @Test func aCommandWithoutASocketCountsAsAttending() throws {
        var jam = try playing()
        try disconnectEverybody(&jam)
        jam.wait(Self.pauseAfter - 1_000)
        try jam.add(2, by: alice) // over REST: nobody's socket is open
        #expect(jam.state.unattendedSince == jam.now)
        #expect(jam.wait(1_000).isEmpty)
        #expect(jam.state.current?.state == .playing)
    }

    @Test func anAbandonedSessionEndsAndSaysWhy() throws {
        var jam = try playing()
        try disconnectEverybody(&jam)
        let left = jam.now
        jam.advanceToDeadline() // the pause
        let events = jam.advanceToDeadline()
        #expect(jam.now == left + Self.endAfter)
        #expect(events.types == [.sessionEnded])
        #expect(events.first?.event.sessionEnded?.reason == "nobody was connected for 3 hours")
        #expect(jam.state.hasEnded)
        #expect(jam.state.nextDeadline() == nil)
    }

    @Test func aSessionNobodyEverOpenedEndsToo() throws {
        var jam = try Jam(members: [], connected: false, timing: Self.timing)
        #expect(jam.state.nextDeadline() == Jam.t0 + Self.endAfter)
        jam.advanceToDeadline()
        #expect(jam.state.hasEnded)
    }

    @Test func aRestartStartsTheClockForSessionsThatHadListeners() throws {
        var jam = try playing()
        let restart = jam.now + 5_000
        _ = try jam.state.apply(TimedInput(at: restart, .restart(Self.timing)))
        #expect(jam.state.connectedCount == 0)
        #expect(jam.state.unattendedSince == restart)
        #expect(jam.state.nextDeadline() == restart + Self.pauseAfter)
    }

    @Test func withoutLimitsAnUnattendedSessionPlaysOn() throws {
        var jam = try Jam(timing: Timing(unattendedPauseMs: nil, abandonAfterMs: nil))
        try jam.startPlaying(1, durationMs: 3_600_000)
        for member in [host, alice, bob] { try jam.apply(.disconnect, by: member) }
        #expect(jam.state.nextDeadline() == jam.now + 3_600_000)
        jam.wait(3_000_000)
        #expect(jam.state.current?.state == .playing)
    }

    @Test func durationsReadAsPeopleSayThem() {
        #expect(SessionState.spokenDuration(24 * 3_600_000) == "24 hours")
        #expect(SessionState.spokenDuration(90 * 60_000) == "90 minutes")
        #expect(SessionState.spokenDuration(60_000) == "1 minute")
        #expect(SessionState.spokenDuration(30_000) == "30 seconds")
    }
}
