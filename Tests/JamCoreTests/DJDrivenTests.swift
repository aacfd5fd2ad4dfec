import JamCore
import JamProtocol
import Testing

/// Sessions whose DJ's device drives the timeline (the PirateRadio profile's rules).
@Suite struct DJDrivenTests {
    static let rules = SessionRules(startMode: .djDriven, maxQueueLength: 3, emptyGraceMs: 300_000)

    func jam(members: [UserID] = [alice, bob]) throws -> Jam {
        try Jam(members: members, rules: Self.rules)
    }

    @Test func addingWhenIdleOnlyQueues() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        #expect(jam.state.current == nil)
        #expect(jam.order == items(1))
        #expect(jam.state.nextDeadline() == nil)
    }

    @Test func prepareMakesTheTrackCurrentButNotPlaying() throws {
        var jam = try jam()
        let outcome = try jam.apply(.djPrepare(track: track(7, durationMs: 1000), itemId: itemID(7)), by: host)
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(7))
        #expect(current.state == .paused)
        #expect(current.positionMs == 0)
        #expect(jam.state.epoch == 1)
        #expect(outcome.events.types == [.playPrepare])
        #expect(jam.state.nextDeadline() == nil)
    }

    @Test func onlyHostsDriveTheTimeline() throws {
        var jam = try jam()
        jam.reject(.djPrepare(track: track(7), itemId: itemID(7)), by: alice, .forbidden)
        try jam.apply(.djPrepare(track: track(7), itemId: itemID(7)), by: host)
        jam.reject(.djTimeline(.commit(positionMs: 0, at: jam.now)), by: alice, .forbidden)
        jam.reject(.skip, by: alice, .forbidden)
    }

    @Test func timelineNeedsACurrentTrackAndSaneValues() throws {
        var jam = try jam()
        jam.reject(.djTimeline(.commit(positionMs: 0, at: jam.now)), by: host, .conflict)
        try jam.apply(.djPrepare(track: track(7), itemId: itemID(7)), by: host)
        jam.reject(.djTimeline(.seek(positionMs: -5, at: jam.now)), by: host, .invalidField)
    }

    @Test func commitStartsTheTimelineAndTheEndAdvancesToTheQueueHead() throws {
        var jam = try jam()
        try jam.add(1, by: alice, durationMs: 2000)
        try jam.apply(.djPrepare(track: track(7, durationMs: 1000), itemId: itemID(7)), by: host)
        let startAt = jam.now + 300
        try jam.apply(.djTimeline(.commit(positionMs: 200, at: startAt)), by: host)
        #expect(jam.state.current?.state == .playing)
        // 800 ms remain after the 200 ms the DJ started from.
        #expect(jam.state.nextDeadline() == startAt + 800)
        #expect(jam.advance(to: startAt + 799).isEmpty)
        let events = jam.advance(to: startAt + 800)
        #expect(events.types.contains(.playPrepare))
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(1))
        #expect(current.state == .playing)
        #expect(current.positionMs == 0)
        #expect(current.anchorMs == startAt + 800)
        #expect(jam.state.epoch == 2)
        #expect(jam.state.history.last?.item.id == itemID(7))
        #expect(jam.state.history.last?.outcome == .played)
    }

    @Test func anEmptyQueueKeepsTheLastTrackHeldWhereItsTimelineWasLastSet() throws {
        var jam = try jam()
        try jam.apply(.djPrepare(track: track(7, durationMs: 1000), itemId: itemID(7)), by: host)
        try jam.apply(.djTimeline(.commit(positionMs: 200, at: jam.now)), by: host)
        let events = jam.wait(800)
        #expect(events.types == [.pause])
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(7))
        #expect(current.state == .paused)
        // Where the DJ's last timeline change (here the commit) set it, not the end: the DJ's
        // play replays the track from there.
        #expect(current.positionMs == 200)
        #expect(current.anchorMs == jam.now)
        #expect(jam.state.epoch == 1)
        #expect(jam.state.nextDeadline() == nil)
    }

    @Test func pauseStopsTheTimerAndResumeArmsItForTheRest() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.apply(.djPrepare(track: track(7, durationMs: 1000), itemId: itemID(7)), by: host)
        try jam.apply(.djTimeline(.commit(positionMs: 0, at: jam.now)), by: host)
        jam.wait(400)
        try jam.apply(.djTimeline(.pause(positionMs: 400, at: jam.now)), by: host)
        #expect(jam.state.nextDeadline() == nil)
        #expect(jam.wait(10_000).isEmpty)
        try jam.apply(.djTimeline(.resume(positionMs: 400, at: jam.now)), by: host)
        #expect(jam.state.nextDeadline() == jam.now + 600)
        #expect(jam.wait(599).isEmpty)
        #expect(!jam.wait(1).isEmpty)
        #expect(jam.state.current?.item.id == itemID(1))
    }

    @Test func aTrackWithoutDurationNeverAdvances() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.apply(.djPrepare(track: track(7, durationMs: nil), itemId: itemID(7)), by: host)
        try jam.apply(.djTimeline(.commit(positionMs: 0, at: jam.now)), by: host)
        #expect(jam.state.nextDeadline() == nil)
        #expect(jam.wait(3_600_000).isEmpty)
    }

    @Test func skipPlaysTheHeadAtOnceAndAnEmptyQueueIsRefused() throws {
        var jam = try jam()
        jam.reject(.skip, by: host, .conflict)
        try jam.add(1, by: alice)
        try jam.apply(.skip, by: host)
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(1))
        #expect(current.state == .playing)
        #expect(current.anchorMs == jam.now)
        #expect(jam.state.epoch == 1)
        jam.reject(.skip, by: host, .conflict)
    }

    @Test func theQueueHasACap() throws {
        var jam = try jam()
        for n in 1...3 { try jam.add(n, by: alice) }
        jam.reject(.add(track: track(4), nonce: "nonce-4", itemId: itemID(4)), by: bob, .queueLimit)
        // A repeated nonce is still answered, full queue or not.
        #expect(try jam.add(1, by: alice).itemId == itemID(1))
    }

    @Test func anEmptiedSessionWithMusicWaitsOutItsGracePeriod() throws {
        var jam = try jam(members: [alice])
        try jam.add(1, by: alice)
        try jam.apply(.leave, by: host)
        try jam.apply(.leave, by: alice)
        #expect(!jam.state.hasEnded)
        #expect(jam.state.emptySince == jam.now)
        #expect(jam.state.nextDeadline() == jam.now + 300_000)
        #expect(jam.wait(299_999).isEmpty)
        let events = jam.wait(1)
        #expect(events.types == [.sessionEnded])
        #expect(jam.state.hasEnded)
    }

    @Test func aGracePeriodTooLongToAddWaitsForeverInsteadOfTrapping() throws {
        // Stored by an older release that took any length: read back, it must not overflow.
        var rules = Self.rules
        rules.emptyGraceMs = .max
        var jam = try Jam(members: [alice], rules: rules)
        try jam.add(1, by: alice)
        try jam.apply(.leave, by: host)
        try jam.apply(.leave, by: alice)
        // Neither the deadline nor the timeline may trap, and the grace never runs out.
        _ = jam.state.nextDeadline()
        _ = jam.wait(3_600_000)
        #expect(!jam.state.hasEnded)
    }

    @Test func whoeverReturnsInTheGracePeriodLeadsTheSession() throws {
        var jam = try jam(members: [alice])
        try jam.add(1, by: alice)
        try jam.apply(.leave, by: alice)
        try jam.apply(.leave, by: host)
        jam.wait(1000)
        try jam.apply(.join(displayName: "Bob"), by: bob)
        #expect(jam.state.emptySince == nil)
        #expect(jam.state.hostId == bob)
        #expect(jam.state.role(of: bob) == .host)
        #expect(jam.wait(600_000).isEmpty)
        #expect(!jam.state.hasEnded)
    }

    @Test func anEmptiedSessionWithoutMusicEndsAtOnce() throws {
        var jam = try jam(members: [alice])
        try jam.apply(.leave, by: alice)
        let outcome = try jam.apply(.leave, by: host)
        #expect(outcome.events.types.contains(.sessionEnded))
        #expect(jam.state.hasEnded)
    }

    @Test func tracksNeedAnIdAndANameUnlessTheRulesWaiveIt() throws {
        let bare = Track(id: "", name: "", artist: "")
        var strict = try jam()
        strict.reject(.add(track: bare, nonce: "n", itemId: itemID(1)), by: alice, .invalidField)
        strict.reject(.djPrepare(track: bare, itemId: itemID(2)), by: host, .invalidField)

        var rules = Self.rules
        rules.tracksNeedIdAndName = false
        var lenient = try Jam(rules: rules)
        try lenient.apply(.add(track: bare, nonce: "n", itemId: itemID(1)), by: alice)
        try lenient.apply(.djPrepare(track: bare, itemId: itemID(2)), by: host)
        // The length limits still hold.
        lenient.reject(.add(track: Track(id: "", name: String(repeating: "x", count: 301), artist: ""), nonce: "m", itemId: itemID(3)), by: alice, .invalidField)
    }

    @Test func aNonceAddsAgainOnceItsItemLeftTheQueueWhenTheRulesSaySo() throws {
        var strict = try jam()
        try strict.add(1, by: alice)
        try strict.apply(.skip, by: host)
        #expect(try strict.apply(.add(track: track(2), nonce: "nonce-1", itemId: itemID(9)), by: alice).itemId == itemID(1))
        #expect(strict.state.queue.isEmpty, "a remembered nonce is a retry")

        var rules = Self.rules
        rules.noncesRepeatOnlyWhileQueued = true
        var lenient = try Jam(rules: rules)
        try lenient.add(1, by: alice)
        #expect(try lenient.apply(.add(track: track(1), nonce: "nonce-1", itemId: itemID(8)), by: alice).itemId == itemID(1), "still queued: a retry")
        try lenient.apply(.skip, by: host)
        #expect(try lenient.apply(.add(track: track(2), nonce: "nonce-1", itemId: itemID(9)), by: alice).itemId == itemID(9))
        #expect(lenient.state.queue.map(\.id) == [itemID(9)])
    }

    @Test func rulesStoredBeforeTheTrackRuleKeepTracksStrict() throws {
        let rules = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"djDriven","maxQueueLength":3}"#.utf8))
        #expect(rules.tracksNeedIdAndName)
        #expect(!rules.noncesRepeatOnlyWhileQueued)
        #expect(rules.maxQueueLength == 3)
    }

    @Test func theStateWithRulesSurvivesEncoding() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.apply(.djPrepare(track: track(7, durationMs: 1000), itemId: itemID(7)), by: host)
        let data = try JSONEncoder().encode(jam.state)
        #expect(try JSONDecoder().decode(SessionState.self, from: data) == jam.state)
    }
}

import Foundation
