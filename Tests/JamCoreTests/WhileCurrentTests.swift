import Testing
import JamCore
import JamProtocol

/// A host control that names its song acts on that song only, and is checked after who may.
struct WhileCurrentTests {
    @Test func aSkipForTheSongThatPlaysSkipsIt() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: host)
        let epoch = try jam.requireCurrent().epoch
        try jam.apply(.whileCurrent(epoch: epoch, command: .skip), by: host)
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.history.last?.outcome == .skipped)
    }

    @Test func aSkipOrSeekForASongThatEndedIsRefusedAndChangesNothing() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: host)
        try jam.add(3, by: host)
        let first = try jam.requireCurrent().epoch
        try jam.apply(.skip, by: host)
        jam.reject(.whileCurrent(epoch: first, command: .skip), by: host, .conflict)
        jam.reject(.whileCurrent(epoch: first, command: .seek(positionMs: 30_000)), by: host, .conflict)
        #expect(jam.state.current?.item.id == itemID(2), "the second song plays on")
    }

    @Test func aSongPastItsEndIsOverThoughTheTurnThatMovesOnHasNotRun() throws {
        var jam = try Jam()
        try jam.startPlaying(1, durationMs: 60_000)
        try jam.add(2, by: host)
        let current = try jam.requireCurrent()
        let end = try #require(current.endsAt)
        // The clock moves without the timeline's turn: the state still holds the first song.
        jam.now = end
        jam.reject(.whileCurrent(epoch: current.epoch, command: .skip), by: host, .conflict)
        #expect(jam.state.current?.epoch == current.epoch)
        jam.now = end - 1
        try jam.apply(.whileCurrent(epoch: current.epoch, command: .skip), by: host)
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func aMembersSkipRequestForASongThatEndedIsRefusedAndCountsAgainstNothing() throws {
        var jam = try Jam(settings: SessionSettings(skipThreshold: 1.0))
        try jam.startPlaying(1)
        try jam.add(2, by: host)
        let first = try jam.requireCurrent().epoch
        try jam.apply(.skip, by: host)
        jam.reject(.whileCurrent(epoch: first, command: .requestSkip), by: alice, .conflict)
        #expect(jam.state.skipRequestCount == 0)
        try jam.apply(.whileCurrent(epoch: try jam.requireCurrent().epoch, command: .requestSkip), by: alice)
        #expect(jam.state.skipRequestCount == 1)
    }

    @Test func aLoggedRecordReplaysWithoutTheCheckItPassedWhenApplied() throws {
        // An owner of an older release logged a member's late request without checking it.
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: host)
        let first = try jam.requireCurrent().epoch
        try jam.apply(.skip, by: host)
        let logged = TimedInput(at: jam.now, .command(.all([.whileCurrent(epoch: first, command: .requestSkip)]), by: alice))
        #expect(throws: JamError.self) { _ = try jam.state.apply(logged) }
        _ = try jam.state.apply(logged.asLogged)
        #expect(jam.state.skipRequests.contains(alice))
    }

    @Test func nothingPlayingRefusesItToo() throws {
        var jam = try Jam()
        jam.reject(.whileCurrent(epoch: 1, command: .skip), by: host, .conflict)
    }

    @Test func aMemberIsToldTheyMayNotBeforeBeingToldTheSongEnded() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.reject(.whileCurrent(epoch: 99, command: .skip), by: alice, .forbidden)
        jam.reject(.whileCurrent(epoch: 99, command: .skip), by: carol, .notMember)
    }
}
