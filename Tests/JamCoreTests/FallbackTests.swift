import Foundation
import JamCore
import JamProtocol
import Testing

/// `fallback`: when the queue runs dry the session goes on with the tracks the server set aside.
@Suite struct FallbackTests {
    static let shuffle = Member(userId: SessionState.fallbackAdder, displayName: "Library shuffle", role: .member, connected: false)

    func jamWithFallback() throws -> Jam {
        var jam = try Jam(settings: SessionSettings(fallback: true))
        #expect(jam.state.fallbackWanted == 2)
        jam.state.supplyFallback([track(10), track(11)])
        #expect(jam.state.fallbackWanted == 0)
        return jam
    }

    @Test func whenTheQueueRunsDryTheReserveFollowsWithoutAGap() throws {
        var jam = try jamWithFallback()
        try jam.startPlaying(1, by: alice)
        let endsAt = try #require(try jam.requireCurrent().endsAt)
        #expect(jam.state.nextDeadline() == endsAt - 5000)
        let prepared = jam.advance(to: endsAt - 5000).playPrepares
        #expect(prepared.count == 1)
        #expect(prepared.first?.item.track == track(10))
        #expect(prepared.first?.item.addedBy == Self.shuffle)
        #expect(prepared.first?.startAt == endsAt)
        #expect(jam.state.fallbackWanted == 1)
        let commits = jam.advance(to: endsAt).playCommits
        #expect(commits.first?.startAt == endsAt)
        #expect(try jam.requireCurrent().item.track == track(10))
        #expect(jam.state.history.last?.item.track == track(1))
    }

    @Test func withFallbackOffTheSessionStopsAtTheEnd() throws {
        var jam = try Jam()
        jam.state.supplyFallback([track(10)])
        try jam.startPlaying(1)
        let endsAt = try #require(try jam.requireCurrent().endsAt)
        #expect(jam.state.nextDeadline() == endsAt)
        let events = jam.advance(to: endsAt)
        #expect(events.types == [.stopped])
        #expect(jam.state.current == nil)
        #expect(jam.state.fallbackWanted == 0)
    }

    @Test func queuedItemsAlwaysComeBeforeFallback() throws {
        var jam = try jamWithFallback()
        try jam.apply(.play, by: host)
        #expect(try jam.requireCurrent().item.track == track(10))
        jam.advance(to: try jam.requireCurrent().anchorMs)
        try jam.add(1, by: bob)
        let endsAt = try #require(try jam.requireCurrent().endsAt)
        let prepared = jam.advance(to: endsAt - 5000).playPrepares
        #expect(prepared.first?.item.id == itemID(1))
        #expect(jam.state.fallbackReserve?.tracks == [track(11)])
    }

    @Test func aSongAddedAfterTheShuffleWasAnnouncedStillPlaysFirst() throws {
        var jam = try jamWithFallback()
        try jam.startPlaying(1, by: alice)
        let endsAt = try #require(try jam.requireCurrent().endsAt)
        let announced = try #require(jam.advance(to: endsAt - 5000).playPrepares.first)
        #expect(announced.item.track == track(10))
        _ = jam.wait(1000)
        let added = try jam.add(2, by: bob)
        // The same epoch and start as the shuffle's, so devices swap what they prepare.
        let replaced = try #require(added.events.playPrepares.first)
        #expect(replaced.item.id == itemID(2))
        #expect(replaced.epoch == announced.epoch && replaced.startAt == announced.startAt)
        #expect(jam.state.upNext?.item.id == itemID(2))
        #expect(jam.order.isEmpty)
        #expect(jam.state.fallbackReserve?.tracks == [track(10), track(11)], "the shuffle's track waits for its turn")
        jam.advance(to: endsAt)
        #expect(try jam.requireCurrent().item.id == itemID(2))
        // When the queue runs dry again, the shuffle goes on where it was.
        let after = try #require(try jam.requireCurrent().endsAt)
        #expect(jam.advance(to: after - 5000).playPrepares.first?.item.track == track(10))
    }

    @Test func aSongAddedTooLateOrWhilePausedPlaysAfterTheAnnouncedShuffle() throws {
        // Too late: devices would not have a start's lead to load it.
        var late = try jamWithFallback()
        try late.startPlaying(1, by: alice)
        let endsAt = try #require(try late.requireCurrent().endsAt)
        late.advance(to: endsAt - 5000)
        late.advance(to: endsAt - late.state.leadMs() + 1)
        #expect(try late.add(2, by: bob).events.playPrepares.isEmpty)
        #expect(late.state.upNext?.item.track == track(10))
        #expect(late.order == [itemID(2)])
        // Paused: clients take an announcement only after a playing item.
        var paused = try jamWithFallback()
        try paused.startPlaying(1, by: alice)
        let pausedEnd = try #require(try paused.requireCurrent().endsAt)
        paused.advance(to: pausedEnd - 5000)
        try paused.apply(.pause, by: host)
        #expect(try paused.add(2, by: bob).events.playPrepares.isEmpty)
        #expect(paused.state.upNext?.item.track == track(10))
    }

    @Test func sessionsStoredBeforeTheRuleKeepTheAnnouncedShuffle() throws {
        let stored = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"scheduled"}"#.utf8))
        #expect(!stored.addsReplaceAnnouncedFallback, "their stored commands replay as they were applied")
        #expect(SessionRules.openJam.addsReplaceAnnouncedFallback)
    }

    @Test func aSecondAddWhileAMembersSongIsUpNextQueuesBehindIt() throws {
        var jam = try jamWithFallback()
        try jam.startPlaying(1, by: alice)
        let endsAt = try #require(try jam.requireCurrent().endsAt)
        jam.advance(to: endsAt - 5000)
        try jam.add(2, by: bob)
        let second = try jam.add(3, by: alice)
        #expect(second.events.playPrepares.isEmpty, "a member's song up next stays")
        #expect(jam.state.upNext?.item.id == itemID(2))
        #expect(jam.order == [itemID(3)])
    }

    @Test func playOnAnIdleSessionStartsTheShuffleAndSkipTakesTheNextTrack() throws {
        var jam = try jamWithFallback()
        let started = try jam.apply(.play, by: host).events.playPrepares
        #expect(started.first?.item.track == track(10))
        #expect(started.first?.item.id == JamID("fallback-1"))
        let skipped = try jam.apply(.skip, by: host).events.playPrepares
        #expect(skipped.first?.item.track == track(11))
        #expect(skipped.first?.item.id == JamID("fallback-2"))
        #expect(jam.state.history.last?.outcome == .skipped)
        #expect(jam.state.fallbackWanted == 2)
        // With the reserve empty (an empty library) a skip stops, like a dry queue without fallback.
        #expect(try jam.apply(.skip, by: host).events.types.contains(.stopped))
    }

    @Test func anEmptyQueueWithoutReserveStillRefusesPlay() throws {
        var jam = try Jam(settings: SessionSettings(fallback: true))
        jam.reject(.play, by: host, .conflict)
    }

    @Test func theReserveIsBoundedAndOnlyWantedWhenFallbackIsOn() throws {
        var jam = try Jam()
        #expect(jam.state.fallbackWanted == 0)
        try jam.apply(.updateSettings(SettingsPatch(fallback: true)), by: host)
        #expect(jam.state.fallbackWanted == 2)
        jam.state.supplyFallback([track(10), track(11), track(12)])
        #expect(jam.state.fallbackReserve?.tracks == [track(10), track(11)])
        // A DJ's device decides what plays next in DJ-driven sessions: no shuffle there.
        let dj = try Jam(settings: SessionSettings(fallback: true), rules: SessionRules(startMode: .djDriven))
        #expect(dj.state.fallbackWanted == 0)
    }

    @Test func recentTracksListUpNextNowPlayingThenHistoryNewestFirst() throws {
        var jam = try jamWithFallback()
        try jam.startPlaying(1)
        try jam.apply(.skip, by: host)
        jam.advance(to: try jam.requireCurrent().anchorMs)
        let endsAt = try #require(try jam.requireCurrent().endsAt)
        jam.advance(to: endsAt - 5000)
        #expect(jam.state.recentTrackIDs(limit: 10) == ["track-11", "track-10", "track-1"])
        #expect(jam.state.recentTrackIDs(limit: 2) == ["track-11", "track-10"])
    }

    @Test func aSessionStoredBeforeFallbackExistedStillLoads() throws {
        let jam = try Jam()
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(jam.state)) as? [String: Any])
        object["fallbackReserve"] = nil
        let decoded = try JSONDecoder().decode(SessionState.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded == jam.state)
        #expect(decoded.fallbackReserve == nil)
    }
}
