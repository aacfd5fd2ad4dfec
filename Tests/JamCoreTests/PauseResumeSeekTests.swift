import Testing
import JamCore
import JamProtocol

struct PauseResumeSeekTests {
    /// Track 1 has played 10 s.
    func tenSecondsIn() throws -> Jam {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.wait(10_000)
        return jam
    }

    @Test func pauseHoldsThePosition() throws {
        var jam = try tenSecondsIn()
        let outcome = try jam.apply(.pause, by: host)
        #expect(outcome.events.map(\.event) == [.pause(TimelineChange(epoch: 1, positionMs: 10_000, atMs: jam.now))])
        let current = try jam.requireCurrent()
        #expect(current.state == .paused)
        #expect(current.positionMs == 10_000)
        #expect(current.anchorMs == jam.now)
        #expect(current.position(at: jam.now + 1_000_000) == 10_000)
        #expect(jam.state.nextDeadline() == nil)
        #expect(jam.wait(1_000_000).isEmpty)
        #expect(jam.state.nowPlayingView()?.state == .paused)
    }

    @Test func pauseRules() throws {
        var idle = try Jam()
        idle.reject(.pause, by: host, .conflict)
        var jam = try tenSecondsIn()
        try jam.apply(.pause, by: host)
        jam.reject(.pause, by: host, .conflict)
    }

    @Test func resumeContinuesAfterTheLead() throws {
        var jam = try tenSecondsIn()
        try jam.apply(.pause, by: host)
        jam.wait(3_000)
        let outcome = try jam.apply(.resume, by: host)
        let at = jam.now + 500
        #expect(outcome.events.map(\.event) == [.resume(TimelineChange(epoch: 1, positionMs: 10_000, atMs: at))])
        let current = try jam.requireCurrent()
        #expect(current.state == .playing)
        #expect(current.anchorMs == at)
        #expect(current.position(at: at) == 10_000)
        #expect(current.position(at: at + 1_000) == 11_000)
        #expect(current.endsAt == at + 170_000)
        #expect(jam.state.nextDeadline() == at + 170_000)
    }

    @Test func resumeRules() throws {
        var idle = try Jam()
        idle.reject(.resume, by: host, .conflict)
        var jam = try tenSecondsIn()
        jam.reject(.resume, by: host, .conflict)
    }

    @Test func playWhilePausedResumes() throws {
        var jam = try tenSecondsIn()
        try jam.apply(.pause, by: host)
        let outcome = try jam.apply(.play, by: host)
        #expect(outcome.events.map(\.event) == [.resume(TimelineChange(epoch: 1, positionMs: 10_000, atMs: jam.now + 500))])
    }

    @Test func playRules() throws {
        var idle = try Jam()
        idle.reject(.play, by: host, .conflict)
        var preparing = try Jam()
        try preparing.add(1, by: alice)
        preparing.reject(.play, by: host, .conflict)
        var playing = try tenSecondsIn()
        playing.reject(.play, by: host, .conflict)
    }

    @Test func playStartsTheQueueHeadWhenNothingIsCurrent() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.vote(3, 1, by: alice)
        // The domain never leaves items waiting while idle, but `play` copes with such a state.
        jam.state.current = nil
        let outcome = try jam.apply(.play, by: host)
        #expect(outcome.events.types == [.playPrepare, .skipRequests, .queueUpdate])
        let prepare = try #require(outcome.events.first?.event.playPrepare)
        #expect(prepare.item.id == itemID(3))
        #expect(prepare.epoch == 2)
        #expect(prepare.startAt == jam.now + 500)
        #expect(prepare.previous == nil)
        #expect(jam.order == items(2))
    }

    @Test func seekWhilePlayingTakesEffectAfterTheLead() throws {
        var jam = try tenSecondsIn()
        let outcome = try jam.apply(.seek(positionMs: 60_000), by: host)
        let at = jam.now + 500
        #expect(outcome.events.map(\.event) == [.seek(TimelineChange(epoch: 1, positionMs: 60_000, atMs: at))])
        let current = try jam.requireCurrent()
        #expect(current.state == .playing)
        #expect(current.position(at: at) == 60_000)
        #expect(current.position(at: at + 2_000) == 62_000)
        #expect(current.endsAt == at + 120_000)
    }

    @Test func seekWhilePausedStaysPaused() throws {
        var jam = try tenSecondsIn()
        try jam.apply(.pause, by: host)
        jam.wait(500)
        let outcome = try jam.apply(.seek(positionMs: 5_000), by: host)
        #expect(outcome.events.map(\.event) == [.seek(TimelineChange(epoch: 1, positionMs: 5_000, atMs: jam.now))])
        #expect(jam.state.current?.state == .paused)
        #expect(jam.state.current?.position(at: jam.now + 9_999) == 5_000)
    }

    @Test func seekWhilePreparingMovesTheStartPosition() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        let startAt = try jam.requireCurrent().anchorMs
        let outcome = try jam.apply(.seek(positionMs: 30_000), by: host)
        #expect(outcome.events.map(\.event) == [.seek(TimelineChange(epoch: 1, positionMs: 30_000, atMs: startAt))])
        let commit = jam.advanceToDeadline()
        #expect(commit.map(\.event) == [.playCommit(PlayCommit(itemId: itemID(1), epoch: 1, startAt: startAt, positionMs: 30_000))])
        #expect(jam.state.current?.endsAt == startAt + 150_000)
    }

    @Test func seekRules() throws {
        var idle = try Jam()
        idle.reject(.seek(positionMs: 0), by: host, .conflict)
        var jam = try tenSecondsIn()
        jam.reject(.seek(positionMs: -1), by: host, .invalidField)
        jam.reject(.seek(positionMs: 180_000), by: host, .invalidField)
        jam.reject(.seek(positionMs: 24 * 3_600_000 + 1), by: host, .invalidField)
        try jam.apply(.seek(positionMs: 179_999), by: host)
    }

    @Test func seekWithoutADurationIsBoundedOnlyByTheDay() throws {
        var jam = try Jam()
        try jam.startPlaying(1, durationMs: nil)
        let tenHours: Int64 = 10 * 3_600_000
        try jam.apply(.seek(positionMs: tenHours), by: host)
        let position = try jam.requireCurrent().positionMs
        #expect(position == tenHours)
    }

    @Test func positionNeverPassesTheEnd() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let current = try jam.requireCurrent()
        #expect(current.position(at: jam.now + 10_000_000) == 180_000)
        #expect(current.position(at: jam.now - 10_000) == 0)
    }

    @Test func timelineChangesKeepTheEpoch() throws {
        var jam = try tenSecondsIn()
        try jam.apply(.pause, by: host)
        try jam.apply(.seek(positionMs: 1_000), by: host)
        try jam.apply(.resume, by: host)
        try jam.apply(.seek(positionMs: 2_000), by: host)
        #expect(jam.state.epoch == 1)
        #expect(jam.log.suffix(4).allSatisfy { $0.epoch == 1 })
    }
}
