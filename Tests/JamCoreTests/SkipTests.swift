import Testing
import JamCore
import JamProtocol

struct HostSkipTests {
    @Test func hostSkipStartsTheNextItem() throws {
        var jam = try Jam()
        let addedAt = jam.now
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.vote(3, 1, by: alice)
        jam.wait(20_000)
        let outcome = try jam.apply(.skip, by: host)
        #expect(outcome.events.types == [.playPrepare, .skipRequests, .queueUpdate])
        #expect(outcome.events.allSatisfy { $0.epoch == 2 })
        let prepare = try #require(outcome.events.first?.event.playPrepare)
        #expect(prepare.item.id == itemID(3))
        #expect(prepare.epoch == 2)
        #expect(prepare.startAt == jam.now + 500)
        let previous = try #require(prepare.previous)
        #expect(previous.item.id == itemID(1))
        #expect(previous.outcome == .skipped)
        #expect(previous.item.reason == "skipped")
        #expect(previous.startedAt == addedAt)
        #expect(previous.endedAt == jam.now)
        #expect(jam.state.history == [previous])
        #expect(outcome.events.last?.event.queueUpdate?.queue.map(\.id) == items(2))
        #expect(jam.state.current?.item.id == itemID(3))
        #expect(jam.state.current?.state == .preparing)
        #expect(jam.state.epoch == 2)
    }

    @Test func hostSkipOfTheLastItemStops() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.wait(1_000)
        let outcome = try jam.apply(.skip, by: host)
        #expect(outcome.events.types == [.stopped])
        let stopped = try #require(outcome.events.first?.event.stopped)
        #expect(stopped.epoch == 1)
        #expect(stopped.previous?.item.id == itemID(1))
        #expect(stopped.previous?.outcome == .skipped)
        #expect(jam.state.current == nil)
        #expect(jam.state.epoch == 1)
        #expect(jam.state.nextDeadline() == nil)
        #expect(jam.state.view(for: alice).nowPlaying == nil)
    }

    @Test func skipWhilePreparingOrPausedWorks() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        try jam.add(2, by: alice)
        try jam.apply(.skip, by: host)
        #expect(jam.state.current?.item.id == itemID(2))
        jam.advance(to: try jam.requireCurrent().anchorMs)
        try jam.add(3, by: bob)
        try jam.apply(.pause, by: host)
        try jam.apply(.skip, by: host)
        #expect(jam.state.current?.item.id == itemID(3))
        #expect(jam.state.current?.state == .preparing)
    }

    @Test func nothingToSkip() throws {
        var jam = try Jam()
        jam.reject(.skip, by: host, .conflict)
        jam.reject(.requestSkip, by: alice, .conflict)
    }
}

struct SkipRequestTests {
    /// Host, Alice, Bob and Carol connected; track 1 plays, track 2 waits.
    func fourConnected(threshold: Double = 0.5) throws -> Jam {
        var jam = try Jam(members: [alice, bob, carol], settings: SessionSettings(skipThreshold: threshold))
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        return jam
    }

    @Test func requestsMustExceedHalfOfTheConnectedMembers() throws {
        var jam = try fourConnected()
        let first = try jam.apply(.requestSkip, by: alice)
        #expect(first.events.map(\.event) == [.skipRequests(SkipRequestsUpdate(count: 1, needed: 3))])
        let second = try jam.apply(.requestSkip, by: bob)
        #expect(second.events.map(\.event) == [.skipRequests(SkipRequestsUpdate(count: 2, needed: 3))])
        // Two of four is exactly half: not enough.
        #expect(jam.state.current?.item.id == itemID(1))
        let third = try jam.apply(.requestSkip, by: carol)
        #expect(third.events.types == [.skipRequests, .playPrepare, .skipRequests, .queueUpdate])
        #expect(third.events[0].event.skipRequests == SkipRequestsUpdate(count: 3, needed: 3))
        #expect(third.events[2].event.skipRequests == SkipRequestsUpdate(count: 0, needed: 3))
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.history.last?.outcome == .skipped)
        #expect(jam.state.history.last?.item.id == itemID(1))
    }

    @Test(arguments: [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)])
    func neededIsStrictlyMoreThanHalf(_ connected: Int, _ needed: Int) throws {
        let others = (2...7).map(user)
        var jam = try Jam(members: others, connected: false)
        for member in ([host] + others).prefix(connected) { try jam.apply(.connect, by: member) }
        #expect(jam.state.connectedCount == connected)
        #expect(jam.state.skipRequestsNeeded == needed)
        #expect(jam.state.view(for: host).skipRequests.needed == needed)
    }

    @Test(arguments: [(0.1, 1), (0.25, 2), (0.5, 3), (0.74, 3), (0.75, 4), (1.0, 4)])
    func thresholdIsAFractionOfConnectedMembers(_ threshold: Double, _ needed: Int) throws {
        let jam = try fourConnected(threshold: threshold)
        #expect(jam.state.skipRequestsNeeded == needed)
    }

    /// Fractions that binary doubles hold a hair below their value (0.29 × 100 is
    /// 28.999999999999996) still need strictly more than their share.
    @Test(arguments: [(0.29, 100, 30), (0.35, 180, 64), (0.57, 100, 58), (0.3, 10, 4), (0.33333333333, 3, 1)])
    func thresholdsThatMultiplyToWholeNumbersNeedOneMore(_ threshold: Double, _ connected: Int, _ needed: Int) throws {
        let others = (2...connected).map(user)
        let jam = try Jam(members: others, settings: SessionSettings(skipThreshold: threshold, maxMembers: 1000))
        #expect(jam.state.connectedCount == connected)
        #expect(jam.state.skipRequestsNeeded == needed)
    }

    @Test func disconnectedMembersDoNotCount() throws {
        var jam = try Jam(members: [alice, bob, carol, dave], connected: false)
        for member in [host, alice, bob] { try jam.apply(.connect, by: member) }
        try jam.startPlaying(1)
        // Three connected: two requests needed. Carol and Dave are offline.
        #expect(try jam.apply(.requestSkip, by: carol).events.map(\.event) == [.skipRequests(SkipRequestsUpdate(count: 0, needed: 2))])
        #expect(try jam.apply(.requestSkip, by: dave).events.map(\.event) == [.skipRequests(SkipRequestsUpdate(count: 0, needed: 2))])
        try jam.apply(.requestSkip, by: alice)
        #expect(jam.state.current?.item.id == itemID(1))
        #expect(jam.state.view(for: carol).skipRequests == SkipRequestsView(count: 1, needed: 2, mine: true))
        try jam.apply(.requestSkip, by: bob)
        #expect(jam.state.current == nil)
    }

    @Test func offlineRequestCountsOnceTheMemberConnects() throws {
        var jam = try Jam(members: [alice, carol], connected: false)
        for member in [host, alice] { try jam.apply(.connect, by: member) }
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.requestSkip, by: carol)
        try jam.apply(.requestSkip, by: alice)
        #expect(jam.state.current?.item.id == itemID(1))
        // Carol connects: 3 connected need 2, and two connected members asked.
        let outcome = try jam.apply(.connect, by: carol)
        #expect(outcome.events.types == [.memberUpdated, .playPrepare, .skipRequests, .queueUpdate])
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func askingTwiceCountsOnce() throws {
        var jam = try fourConnected()
        try jam.apply(.requestSkip, by: alice)
        let before = jam.state
        #expect(try jam.apply(.requestSkip, by: alice).events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func aWithdrawnRequestNoLongerCounts() throws {
        var jam = try fourConnected()
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        let withdrawn = try jam.apply(.withdrawSkipRequest, by: alice)
        #expect(withdrawn.events.map(\.event) == [.skipRequests(SkipRequestsUpdate(count: 1, needed: 3))])
        #expect(jam.state.view(for: alice).skipRequests == SkipRequestsView(count: 1, needed: 3, mine: false))
        #expect(jam.state.view(for: bob).skipRequests == SkipRequestsView(count: 1, needed: 3, mine: true))
        // Carol's request would have been the third; with Alice's taken back it is the second.
        try jam.apply(.requestSkip, by: carol)
        #expect(jam.state.current?.item.id == itemID(1))
        // Asking again counts again, and skips.
        try jam.apply(.requestSkip, by: alice)
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func withdrawingARequestNotMadeChangesNothing() throws {
        var jam = try fourConnected()
        try jam.apply(.requestSkip, by: bob)
        let before = jam.state
        #expect(try jam.apply(.withdrawSkipRequest, by: alice).events.isEmpty)
        #expect(jam.state == before)
        try jam.apply(.withdrawSkipRequest, by: bob)
        let withdrawn = jam.state
        #expect(try jam.apply(.withdrawSkipRequest, by: bob).events.isEmpty)
        #expect(jam.state == withdrawn)
    }

    @Test func anOfflineMembersWithdrawnRequestDoesNotCountOnceTheyConnect() throws {
        var jam = try Jam(members: [alice, carol], connected: false)
        for member in [host, alice] { try jam.apply(.connect, by: member) }
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.requestSkip, by: carol)
        #expect(try jam.apply(.withdrawSkipRequest, by: carol).events.map(\.event) == [.skipRequests(SkipRequestsUpdate(count: 0, needed: 2))])
        try jam.apply(.requestSkip, by: alice)
        // Carol connects: 3 connected need 2, and only Alice asks.
        try jam.apply(.connect, by: carol)
        #expect(jam.state.current?.item.id == itemID(1))
        #expect(jam.state.view(for: carol).skipRequests == SkipRequestsView(count: 1, needed: 2, mine: false))
    }

    @Test func nothingToWithdrawWhileNothingPlays() throws {
        var jam = try Jam(members: [alice])
        jam.reject(.withdrawSkipRequest, by: alice, .conflict)
    }

    @Test func aWithdrawalMeantForAnEarlierSongIsRefused() throws {
        var jam = try fourConnected()
        let first = try jam.requireCurrent().epoch
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.skip, by: host)
        try jam.apply(.requestSkip, by: alice)
        // Sent for the first song, it must not take back the request for the second.
        jam.reject(.whileCurrent(epoch: first, command: .withdrawSkipRequest), by: alice, .conflict)
        #expect(jam.state.view(for: alice).skipRequests.mine)
        try jam.apply(.whileCurrent(epoch: jam.requireCurrent().epoch, command: .withdrawSkipRequest), by: alice)
        #expect(!jam.state.view(for: alice).skipRequests.mine)
    }

    @Test func requestsResetOnEveryTrack() throws {
        var jam = try fourConnected()
        try jam.add(3, by: bob)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        try jam.apply(.skip, by: host)
        #expect(jam.state.skipRequests.isEmpty)
        #expect(jam.state.view(for: alice).skipRequests == SkipRequestsView(count: 0, needed: 3, mine: false))
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        #expect(jam.state.current?.item.id == itemID(2))
        // Auto-advance resets them too.
        jam.advance(to: try jam.requireCurrent().anchorMs)
        jam.advanceToDeadline()
        jam.advanceToDeadline()
        #expect(jam.state.current?.item.id == itemID(3))
        #expect(jam.state.skipRequests.isEmpty)
    }

    @Test func requestsResetWhenPlaybackStops() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1)
        try jam.apply(.requestSkip, by: alice)
        jam.advance(to: try #require(jam.requireCurrent().endsAt))
        #expect(jam.state.current == nil)
        #expect(jam.state.skipRequests.isEmpty)
        #expect(jam.state.view(for: alice).skipRequests == SkipRequestsView(count: 0, needed: 3, mine: false))
    }

    @Test func disconnectOfANonRequesterCanTipTheBalance() throws {
        var jam = try fourConnected()
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        let outcome = try jam.apply(.disconnect, by: carol)
        #expect(outcome.events.types == [.memberUpdated, .playPrepare, .skipRequests, .queueUpdate])
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func leaveOfANonRequesterCanTipTheBalance() throws {
        var jam = try fourConnected()
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        let outcome = try jam.apply(.leave, by: carol)
        #expect(outcome.events.types == [.memberLeft, .playPrepare, .skipRequests, .queueUpdate])
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func requesterDisconnectingWithdrawsTheirCount() throws {
        var jam = try fourConnected()
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        try jam.apply(.disconnect, by: bob)
        // 3 connected need 2; only Alice's request counts now.
        #expect(jam.state.view(for: host).skipRequests == SkipRequestsView(count: 1, needed: 2, mine: false))
        #expect(jam.state.current?.item.id == itemID(1))
    }

    @Test func membersComingAndGoingSendTheFiguresMembersSee() throws {
        var jam = try Jam(members: [alice, bob, carol, dave], connected: false)
        // Nothing plays: there are no figures to show.
        #expect(try jam.apply(.connect, by: host).events.types == [.memberUpdated])
        for member in [alice, bob, carol] { try jam.apply(.connect, by: member) }
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.requestSkip, by: alice)
        #expect(jam.state.view(for: host).skipRequests == SkipRequestsView(count: 1, needed: 3, mine: false))
        // Dave connects: 5 connected need 3; Alice still shows "1 of 3".
        #expect(try jam.apply(.connect, by: dave).events.types == [.memberUpdated])
        // Carol drops: 4 need 3, unchanged. Bob drops: 3 need 2.
        #expect(try jam.apply(.disconnect, by: carol).events.types == [.memberUpdated])
        let dropped = try jam.apply(.disconnect, by: bob)
        #expect(dropped.events.map(\.event).last == .skipRequests(SkipRequestsUpdate(count: 1, needed: 2)))
        // Dave leaves: 2 connected need 2.
        let left = try jam.apply(.leave, by: dave)
        #expect(left.events.types == [.memberLeft])
        // Bob comes back: 3 need 2 again, no event; Carol too: 4 need 3.
        #expect(try jam.apply(.connect, by: bob).events.types == [.memberUpdated])
        let back = try jam.apply(.connect, by: carol)
        #expect(back.events.map(\.event).last == .skipRequests(SkipRequestsUpdate(count: 1, needed: 3)))
        #expect(jam.state.current?.item.id == itemID(1))
        // A departure that tips the balance skips, and the next item's start sends its figures.
        try jam.apply(.requestSkip, by: bob)
        let skipped = try jam.apply(.leave, by: carol)
        #expect(skipped.events.types == [.memberLeft, .playPrepare, .skipRequests, .queueUpdate])
        #expect(skipped.events[2].event.skipRequests == SkipRequestsUpdate(count: 0, needed: 2))
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func requestWhilePreparingOrPausedCounts() throws {
        var jam = try Jam(members: [alice])
        try jam.add(1, by: host)
        try jam.add(2, by: host)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: host)
        #expect(jam.state.current?.item.id == itemID(2))
        jam.advance(to: try jam.requireCurrent().anchorMs)
        try jam.apply(.pause, by: host)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: host)
        #expect(jam.state.current == nil)
    }
}
