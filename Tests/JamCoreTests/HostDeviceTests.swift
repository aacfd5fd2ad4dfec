import JamCore
import JamProtocol
import Testing

/// Sessions whose host's own player plays (the QueueIT profile's rules): the server moves on
/// only when told, and every member counts for skip requests, socket or not.
@Suite struct HostDeviceTests {
    static let rules = SessionRules(startMode: .hostDevice, emptyGraceMs: 86_400_000)

    func jam(members: [UserID] = [alice, bob], connected: Bool = false) throws -> Jam {
        try Jam(members: members, connected: connected, rules: Self.rules)
    }

    /// Host, alice, bob and carol, none connected, with leavers' skip requests kept (QueueIT's).
    func keptJam() throws -> Jam {
        var rules = Self.rules
        rules.departedSkipRequests = .kept
        return try Jam(members: [alice, bob, carol], connected: false, rules: rules)
    }

    @Test func theFirstAddPlaysAtOnceAndLaterOnesQueue() throws {
        var jam = try jam()
        let first = try jam.add(1, by: alice)
        #expect(first.events.types == [.playPrepare, .playCommit, .queueUpdate])
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(1))
        #expect(current.state == .playing)
        #expect(current.anchorMs == jam.now)
        try jam.add(2, by: bob)
        #expect(jam.state.current?.item.id == itemID(1))
        #expect(jam.order == items(2))
    }

    @Test func nothingEndsByTheClock() throws {
        var jam = try jam()
        try jam.add(1, by: alice, durationMs: 1000)
        try jam.add(2, by: bob)
        // The only deadline left is the session's own upkeep (an abandoned one ends after a day).
        #expect((jam.state.nextDeadline() ?? .max) >= jam.now + 3_600_000)
        #expect(jam.advance(to: jam.now + 3_600_000).isEmpty)
        #expect(jam.state.current?.item.id == itemID(1))
    }

    @Test func finishRecordsThePlayAndStartsTheQueueHead() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        let outcome = try jam.apply(.finish, by: host)
        #expect(outcome.events.types == [.playPrepare, .playCommit, .queueUpdate])
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.history.last?.item.id == itemID(1))
        #expect(jam.state.history.last?.outcome == .played)
        #expect(jam.order.isEmpty)
    }

    @Test func finishingTheLastSongStopsAndARepeatedFinishChangesNothing() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        let outcome = try jam.apply(.finish, by: host)
        #expect(outcome.events.types == [.stopped])
        #expect(jam.state.current == nil)
        let before = jam.state
        let again = try jam.apply(.finish, by: host)
        #expect(again.events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func onlyHostsFinishAndOnlyInHostDeviceSessions() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        jam.reject(.finish, by: alice, .forbidden)
        var scheduled = try Jam(members: [alice, bob])
        try scheduled.add(1, by: alice)
        scheduled.reject(.finish, by: host, .conflict)
    }

    @Test func hostSkipRecordsASkipAndStartsTheNext() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        try jam.apply(.skip, by: host)
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.current?.state == .playing)
        #expect(jam.state.history.last?.outcome == .skipped)
    }

    @Test func skipRequestsCountMembersWithoutSockets() throws {
        // host, alice, bob and carol: none connected; more than half is 3.
        var jam = try jam(members: [alice, bob, carol])
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        #expect(jam.state.skipVoterCount == 4)
        #expect(jam.state.skipRequestsNeeded == 3)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        #expect(jam.state.skipRequestCount == 2)
        #expect(jam.state.current?.item.id == itemID(1))
        try jam.apply(.requestSkip, by: carol)
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.history.last?.outcome == .skipped)
        #expect(jam.state.skipRequestCount == 0)
    }

    @Test func aLeaversRequestIsWithdrawnAndTheRestCheckedAtOnceByDefault() throws {
        // host, alice, bob and carol: more than half of four is 3; of three, 2.
        var jam = try jam(members: [alice, bob, carol])
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        try jam.apply(.leave, by: carol)
        #expect(jam.state.current?.item.id == itemID(2), "two of three ask: skipped as carol leaves")
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.skipRequestCount == 0)
    }

    @Test func aLeaversRequestStaysCountedUntilTheSongChangesWhereRequestsAreKept() throws {
        var jam = try keptJam()
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        let leaving = try jam.apply(.leave, by: carol)
        // Nothing is checked as a member leaves; the figures members see go out: 2 of 2 now.
        #expect(leaving.events.map(\.event).dropFirst() == [.skipRequests(SkipRequestsUpdate(count: 2, needed: 2))])
        #expect(leaving.events.types.first == .memberLeft)
        #expect(jam.state.current?.item.id == itemID(1))
        try jam.apply(.leave, by: alice)
        #expect(jam.state.skipRequestCount == 2, "alice's request still counts")
        #expect(jam.state.skipRequestsNeeded == 2)
        // The next request is checked, the leavers' with it: host's makes 3 of 2 needed.
        try jam.apply(.requestSkip, by: host)
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.history.last?.outcome == .skipped)
        #expect(jam.state.skipRequestCount == 0, "a new song starts with no requests, the leavers' gone too")
    }

    @Test func aRepeatedRequestChecksKeptRequestsOnlyWhereEveryRequestChecks() throws {
        for (rule, skips) in [(SessionRules.DepartedSkipRequests.kept, false), (.keptCheckedAtEveryRequest, true)] {
            var rules = Self.rules
            rules.departedSkipRequests = rule
            var jam = try Jam(members: [alice, bob, carol], connected: false, rules: rules)
            try jam.add(1, by: alice)
            try jam.add(2, by: bob)
            try jam.apply(.requestSkip, by: alice)
            try jam.apply(.requestSkip, by: bob)
            try jam.apply(.leave, by: carol)
            // 2 of 3 (host, alice, bob) now; alice asks again.
            let again = try jam.apply(.requestSkip, by: alice)
            #expect((jam.state.current?.item.id == itemID(2)) == skips, "\(rule): \(again.events.types)")
            #expect((jam.state.history.last?.outcome == .skipped) == skips, "\(rule)")
        }
    }

    @Test func keptRequestsAreNotCheckedWhenSomebodyConnects() throws {
        var jam = try keptJam()
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        try jam.apply(.leave, by: carol)
        #expect(jam.state.skipRequestCount >= jam.state.skipRequestsNeeded)
        try jam.apply(.connect, by: bob)
        #expect(jam.state.current?.item.id == itemID(1), "only a request checks them")
    }

    @Test func aKeptRequestIsTheMembersOwnAgainWhenTheyComeBack() throws {
        var jam = try keptJam()
        try jam.add(1, by: alice)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.leave, by: alice)
        try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(jam.state.skipRequestCount == 1, "counted once, not as a member and as a leaver")
        #expect(jam.state.view(for: alice).skipRequests.mine)
        // A kicked member's request goes with them.
        try jam.apply(.requestSkip, by: bob)
        try jam.apply(.kick(userId: bob), by: host)
        #expect(jam.state.skipRequestCount == 1)
    }

    @Test func membersVoteOnWhatPlays() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        let outcome = try jam.vote(1, 1, by: bob)
        #expect(outcome.score == 1)
        #expect(outcome.events.first?.event.votesUpdate == VotesUpdate(itemId: itemID(1), score: 1, reason: "now playing"))
        let cleared = try jam.vote(1, 0, by: bob)
        #expect(cleared.score == 0)
        #expect(jam.state.current?.item.votes.isEmpty == true)
    }
}
