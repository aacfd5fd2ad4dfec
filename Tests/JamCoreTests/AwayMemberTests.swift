import Testing
import JamCore
import JamProtocol

struct AwayMemberTests {
    static let dropAfter: Millis = 2 * 3_600_000
    static let timing = Timing(unattendedPauseMs: nil, abandonAfterMs: nil, dropAwayMs: dropAfter)

    @Test func aMemberAwayForTheWhileLeavesWhileOthersAreConnected() throws {
        var jam = try Jam(timing: Self.timing)
        try jam.apply(.disconnect, by: alice)
        let left = jam.now
        #expect(jam.state.member(alice)?.awaySince == left)
        #expect(jam.state.nextDeadline() == left + Self.dropAfter)
        #expect(jam.advance(to: left + Self.dropAfter - 1).isEmpty)
        let events = jam.advance(to: left + Self.dropAfter)
        #expect(events.types == [.memberLeft])
        #expect(events.first?.event.memberLeft?.userId == alice)
        #expect(jam.state.member(alice) == nil)
        #expect(jam.state.member(bob) != nil && jam.state.member(host) != nil)
        #expect(jam.state.nextDeadline() == nil)
    }

    @Test func comingBackInTimeOrActingOverRESTKeepsAMember() throws {
        var jam = try Jam(timing: Self.timing)
        try jam.apply(.disconnect, by: alice)
        try jam.apply(.disconnect, by: bob)
        jam.wait(Self.dropAfter - 60_000)
        try jam.apply(.connect, by: alice)
        #expect(jam.state.member(alice)?.awaySince == nil)
        try jam.add(1, by: bob)  // no socket: a REST add
        #expect(jam.state.member(bob)?.awaySince == jam.now)
        jam.wait(120_000)
        #expect(jam.state.members.count == 3)
    }

    @Test func nobodyLeavesForBeingAwayWhileNobodyIsConnected() throws {
        var jam = try Jam(timing: Self.timing)
        for member in [host, alice, bob] { try jam.apply(.disconnect, by: member) }
        #expect(jam.state.nextDeadline() == nil)
        jam.wait(10 * Self.dropAfter)
        #expect(jam.state.members.count == 3)
        // The first one back finds the others still members, and their time away counts.
        try jam.apply(.connect, by: bob)
        let events = jam.advance(to: jam.now)
        #expect(Set(events.compactMap { $0.event.memberLeft?.userId }) == [host, alice])
        #expect(jam.state.hostId == bob, "the host role passes to who is there")
    }

    @Test func aMemberWhoJoinedAndNeverConnectedLeavesAfterTheWhile() throws {
        var jam = try Jam(timing: Self.timing)
        try jam.apply(.join(displayName: "Carol"), by: carol)
        jam.wait(Self.dropAfter)
        #expect(jam.state.member(carol) == nil)
    }

    @Test func aDepartedMembersPlaceInTheFairOrderIsForgottenOnceTheirItemsHavePlayed() throws {
        var jam = try Jam(settings: SessionSettings(ordering: .fair), timing: Self.timing)
        try jam.add(1, by: alice, durationMs: 60_000)
        try jam.add(2, by: alice, durationMs: 60_000)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.lastTurn[alice] != nil, "her second item still waits its turn")
        for _ in 0..<6 { jam.advanceToDeadline() }
        #expect(jam.state.queue.isEmpty)
        #expect(jam.state.lastTurn[alice] == nil)
    }

    @Test func withoutADropTimeAwayMembersStay() throws {
        var jam = try Jam(timing: Timing(unattendedPauseMs: nil, abandonAfterMs: nil, dropAwayMs: nil))
        try jam.apply(.disconnect, by: alice)
        #expect(jam.state.nextDeadline() == nil)
        jam.wait(30 * 24 * 3_600_000)
        #expect(jam.state.member(alice) != nil)
    }

    @Test func anAwayMembersSkipRequestStaysWhereEveryRequestChecksAndGoesElsewhere() throws {
        for (rule, kept) in [(SessionRules.DepartedSkipRequests.withdrawn, false), (.kept, false), (.keptCheckedAtEveryRequest, true)] {
            var rules = SessionRules(startMode: .hostDevice)
            rules.departedSkipRequests = rule
            var jam = try Jam(members: [alice, bob, carol], timing: Self.timing, rules: rules)
            try jam.add(1, by: alice)
            try jam.add(2, by: alice)
            try jam.apply(.requestSkip, by: alice)
            try jam.apply(.requestSkip, by: bob)
            try jam.apply(.disconnect, by: bob)
            _ = jam.advance(to: jam.now + Self.dropAfter)
            #expect(jam.state.member(bob) == nil, "\(rule)")
            #expect(jam.state.skipRequests.contains(bob) == kept, "\(rule)")
            #expect(jam.state.current?.item.id == itemID(1), "\(rule): nothing reached the threshold")
        }
    }
}
