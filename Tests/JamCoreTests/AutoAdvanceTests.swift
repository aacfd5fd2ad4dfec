import Testing
import JamCore
import JamProtocol

struct AutoAdvanceTests {
    /// Track 1 (3 min) starts at `start`; tracks 2 (Alice) and 3 (Bob) wait.
    func playingWithTwoQueued() throws -> (jam: Jam, start: Millis) {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        return (jam, jam.now)
    }

    @Test func nextItemIsPreparedAheadOfTheEnd() throws {
        var (jam, start) = try playingWithTwoQueued()
        let end = start + 180_000
        #expect(jam.state.nextDeadline() == end - 5_000)
        #expect(jam.advance(to: end - 5_001).isEmpty)
        let events = jam.advance(to: end - 5_000)
        #expect(events.types == [.playPrepare, .queueUpdate])
        #expect(events.allSatisfy { $0.epoch == 1 })
        let prepare = try #require(events.first?.event.playPrepare)
        #expect(prepare.item.id == itemID(2))
        #expect(prepare.item.reason == "up next")
        #expect(prepare.epoch == 2)
        #expect(prepare.startAt == end)
        #expect(prepare.previous == nil)
        #expect(events.last?.event.queueUpdate?.queue.map(\.id) == items(3))
        #expect(jam.state.current?.item.id == itemID(1))
        #expect(jam.state.epoch == 1)
        #expect(jam.state.upNext?.item.id == itemID(2))
        let upNext = try #require(jam.state.view(for: bob).upNext)
        #expect(upNext.item.id == itemID(2))
        #expect(upNext.epoch == 2)
        #expect(upNext.state == .preparing)
        #expect(upNext.anchorMs == end)
    }

    @Test func handOverIsGaplessAtTheExactEnd() throws {
        var (jam, start) = try playingWithTwoQueued()
        let end = start + 180_000
        jam.advanceToDeadline()
        #expect(jam.state.nextDeadline() == end - 150)
        #expect(jam.advance(to: end - 151).isEmpty)
        let events = jam.advance(to: end - 150)
        #expect(events.types == [.playPrepare, .skipRequests, .playCommit])
        #expect(events.allSatisfy { $0.epoch == 2 })
        let prepare = try #require(events.first?.event.playPrepare)
        #expect(prepare.item.id == itemID(2))
        #expect(prepare.startAt == end)
        let previous = try #require(prepare.previous)
        #expect(previous.item.id == itemID(1))
        #expect(previous.outcome == .played)
        #expect(previous.item.reason == "played")
        #expect(previous.endedAt == end)
        #expect(events.last?.event == .playCommit(PlayCommit(itemId: itemID(2), epoch: 2, startAt: end, positionMs: 0)))
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(2))
        #expect(current.state == .playing)
        #expect(current.anchorMs == end)
        #expect(current.position(at: end) == 0)
        #expect(current.position(at: end + 1_234) == 1_234)
        #expect(jam.state.upNext == nil)
        #expect(jam.state.history == [previous])
        #expect(jam.state.epoch == 2)
    }

    @Test func playbackStopsWhenTheQueueRunsDry() throws {
        var (jam, start) = try playingWithTwoQueued()
        var events: [ServerEnvelope] = []
        while jam.state.current != nil { events += jam.advanceToDeadline() }
        #expect(events.playCommits.map(\.startAt) == [start + 180_000, start + 360_000])
        #expect(events.playCommits.map(\.itemId) == items(2, 3))
        let stopped = try #require(events.last?.event.stopped)
        #expect(stopped.epoch == 3)
        #expect(stopped.previous?.item.id == itemID(3))
        #expect(stopped.previous?.outcome == .played)
        #expect(stopped.previous?.endedAt == start + 540_000)
        #expect(jam.now == start + 540_000)
        #expect(jam.state.history.map(\.item.id) == items(1, 2, 3))
        #expect(jam.state.history.map(\.outcome) == [.played, .played, .played])
        #expect(jam.state.history.map(\.endedAt) == [start + 180_000, start + 360_000, start + 540_000])
        #expect(jam.state.epoch == 3)
        #expect(jam.state.nextDeadline() == nil)
        #expect(jam.wait(1_000_000).isEmpty)
        // The next add starts at once, as a new epoch.
        let outcome = try jam.add(4, by: alice)
        #expect(outcome.events.first?.event.playPrepare?.epoch == 4)
    }

    @Test func stopWithoutQueueAtTheEnd() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let end = try #require(jam.requireCurrent().endsAt)
        #expect(jam.state.nextDeadline() == end)
        #expect(jam.advance(to: end - 1).isEmpty)
        let events = jam.advance(to: end)
        #expect(events.types == [.stopped])
        #expect(events.first?.epoch == 1)
    }

    @Test func longOutageCatchesUpInOneStep() throws {
        var jam = try Jam()
        try jam.startPlaying(1, durationMs: 30_000)
        let start = jam.now
        for n in 2...4 { try jam.add(n, by: alice, durationMs: 30_000) }
        let events = jam.advance(to: start + 10_000_000)
        #expect(events.playCommits.map(\.itemId) == items(2, 3, 4))
        #expect(events.playCommits.map(\.startAt) == [start + 30_000, start + 60_000, start + 90_000])
        #expect(events.last?.event.stopped?.previous?.endedAt == start + 120_000)
        #expect(jam.state.history.map(\.endedAt) == [start + 30_000, start + 60_000, start + 90_000, start + 120_000])
        #expect(jam.state.current == nil)
        #expect(jam.state.epoch == 4)
        #expect(jam.log.map(\.seq) == Array(1...Int64(jam.log.count)))
    }

    @Test func shortTrackPreparesItsSuccessorImmediately() throws {
        var jam = try Jam()
        try jam.startPlaying(1, durationMs: 3_000)
        let outcome = try jam.add(2, by: alice)
        #expect(outcome.events.types == [.queueItemAdded, .playPrepare, .queueUpdate])
        #expect(jam.state.upNext?.startAt == jam.now + 3_000)
    }

    @Test func pauseHoldsTheAdvance() throws {
        var (jam, start) = try playingWithTwoQueued()
        jam.advance(to: start + 100_000)
        try jam.apply(.pause, by: host)
        #expect(jam.advance(to: start + 10_000_000).isEmpty)
        #expect(jam.state.current?.item.id == itemID(1))
        try jam.apply(.resume, by: host)
        let resumeAt = jam.now + 500
        #expect(jam.state.nextDeadline() == resumeAt + 80_000 - 5_000)
    }

    @Test func resumeReannouncesThePreparedItem() throws {
        var (jam, start) = try playingWithTwoQueued()
        jam.advanceToDeadline()
        jam.advance(to: start + 176_000)
        try jam.apply(.pause, by: host)
        // Paused with 4 s left; the prepared item waits.
        #expect(jam.advance(to: start + 300_000).isEmpty)
        #expect(jam.state.upNext?.item.id == itemID(2))
        let outcome = try jam.apply(.resume, by: host)
        let newEnd = jam.now + 500 + 4_000
        #expect(outcome.events.types == [.resume, .playPrepare])
        let prepare = try #require(outcome.events.last?.event.playPrepare)
        #expect(prepare.item.id == itemID(2))
        #expect(prepare.epoch == 2)
        #expect(prepare.startAt == newEnd)
        #expect(jam.state.upNext?.startAt == newEnd)
        jam.advanceToDeadline()
        #expect(jam.state.current?.anchorMs == newEnd)
        #expect(jam.state.history.last?.endedAt == newEnd)
    }

    @Test func seekReannouncesThePreparedItem() throws {
        var (jam, _) = try playingWithTwoQueued()
        jam.advanceToDeadline()
        let outcome = try jam.apply(.seek(positionMs: 0), by: host)
        let newEnd = jam.now + 500 + 180_000
        #expect(outcome.events.types == [.seek, .playPrepare])
        #expect(outcome.events.last?.event.playPrepare?.startAt == newEnd)
        #expect(jam.state.nextDeadline() == newEnd - 150)
    }

    @Test func seekWhilePausedDefersTheReannouncement() throws {
        var (jam, _) = try playingWithTwoQueued()
        jam.advanceToDeadline()
        try jam.apply(.pause, by: host)
        #expect(try jam.apply(.seek(positionMs: 0), by: host).events.types == [.seek])
    }

    @Test func hostSkipPlaysThePreparedItemNow() throws {
        var (jam, _) = try playingWithTwoQueued()
        jam.advanceToDeadline()
        try jam.vote(3, 1, by: alice)
        let outcome = try jam.apply(.skip, by: host)
        let prepare = try #require(outcome.events.first?.event.playPrepare)
        #expect(prepare.item.id == itemID(2))
        #expect(prepare.startAt == jam.now + 500)
        #expect(prepare.previous?.outcome == .skipped)
        #expect(jam.state.upNext == nil)
        #expect(jam.order == items(3))
    }

    @Test func votesDoNotDisplaceThePreparedItem() throws {
        var (jam, _) = try playingWithTwoQueued()
        jam.advanceToDeadline()
        try jam.vote(3, 1, by: alice)
        try jam.vote(3, 1, by: bob)
        jam.advanceToDeadline()
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func epochChangesExactlyWhenTheCurrentItemChanges() throws {
        var (jam, _) = try playingWithTwoQueued()
        #expect(jam.state.epoch == 1)
        try jam.apply(.pause, by: host)
        try jam.apply(.seek(positionMs: 100_000), by: host)
        try jam.apply(.resume, by: host)
        try jam.vote(2, 1, by: bob)
        try jam.apply(.requestSkip, by: alice)
        jam.advanceToDeadline()  // prepares item 2: not current yet
        #expect(jam.state.epoch == 1)
        jam.advanceToDeadline()  // hand-over
        #expect(jam.state.epoch == 2)
        try jam.apply(.skip, by: host)
        #expect(jam.state.epoch == 3)
        try jam.apply(.skip, by: host)  // stops: nothing new is current
        #expect(jam.state.epoch == 3)
        try jam.add(5, by: alice)
        #expect(jam.state.epoch == 4)
        // Every envelope carries the epoch in force when it was emitted, never decreasing.
        let epochs = jam.log.map(\.epoch)
        #expect(epochs == epochs.sorted())
    }

    @Test func nextDeadlineFollowsThePhase() throws {
        var jam = try Jam()
        #expect(jam.state.nextDeadline() == nil)
        try jam.add(1, by: alice)
        #expect(jam.state.nextDeadline() == jam.state.current?.commitBy)
        jam.advanceToDeadline()
        let end = try #require(jam.requireCurrent().endsAt)
        #expect(jam.state.nextDeadline() == end)
        try jam.add(2, by: alice)
        #expect(jam.state.nextDeadline() == end - 5_000)
        jam.advanceToDeadline()
        #expect(jam.state.nextDeadline() == end - 150)
        try jam.apply(.pause, by: host)
        #expect(jam.state.nextDeadline() == nil)
    }
}
