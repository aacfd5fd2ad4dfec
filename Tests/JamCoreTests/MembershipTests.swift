import Testing
import JamCore
import JamProtocol

struct MembershipTests {
    @Test func joinAddsAPlainMember() throws {
        var jam = try Jam(members: [])
        let outcome = try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(outcome.events.map(\.event) == [.memberJoined(Member(userId: alice, displayName: "Alice", role: .member, connected: false))])
        #expect(jam.state.members.map(\.userId) == [host, alice])
        #expect(jam.state.role(of: alice) == .member)
        #expect(jam.state.member(alice)?.joinedAt == jam.now)
    }

    @Test func joinTrimsTheDisplayName() throws {
        var jam = try Jam(members: [])
        try jam.apply(.join(displayName: "  Alice \n"), by: alice)
        #expect(jam.state.member(alice)?.displayName == "Alice")
    }

    @Test func joinWithoutANameIsRefused() throws {
        var jam = try Jam(members: [])
        jam.reject(.join(displayName: "   "), by: alice, .invalidField)
        jam.reject(.join(displayName: String(repeating: "x", count: Validate.maxDisplayName + 1)), by: alice, .invalidField)
    }

    @Test func joiningTwiceWithTheSameNameChangesNothing() throws {
        var jam = try Jam()
        let before = jam.state
        let outcome = try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(outcome.events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func joiningTwiceIsARenameOnly() throws {
        var jam = try Jam()
        try jam.apply(.setRole(userId: alice, role: .cohost), by: host)
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.requestSkip, by: alice)
        jam.wait(1_000)
        var expected = jam.state
        let outcome = try jam.apply(.join(displayName: "Alicia"), by: alice)
        #expect(outcome.events.map(\.event) == [.memberUpdated(Member(userId: alice, displayName: "Alicia", role: .cohost, connected: true))])
        // Only the name (the member's, and the one their items keep) and the event counter
        // moved. Role, join time, connections, votes, skip requests stay.
        expected.members[1].displayName = "Alicia"
        expected.queue[0].addedByName = "Alicia"
        expected.seq += 1
        #expect(jam.state == expected)
        #expect(jam.state.queueView().first?.addedBy.displayName == "Alicia")
    }

    @Test func aMemberBackUnderANewNameGivesItToTheItemsTheyLeft() throws {
        // Mirrors take the name from memberJoined; once the member leaves again, the
        // server's view must still agree with them.
        var jam = try Jam(members: [alice, bob], settings: SessionSettings(ordering: .fair))
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.apply(.leave, by: alice)
        let back = try jam.apply(.join(displayName: "Ally"), by: alice)
        // Fair ordering names adders in the reasons ("Ally's turn"): the queue goes out again.
        #expect(back.events.types == [.memberJoined, .queueUpdate])
        #expect(jam.state.queueView().contains { $0.reason.contains("Ally") })
        try jam.apply(.leave, by: alice)
        let item = try #require(jam.state.queueView().first { $0.addedBy.userId == alice })
        #expect(item.addedBy.displayName == "Ally")
        // Back under the same name: nothing about the items changes.
        #expect(try jam.apply(.join(displayName: "Ally"), by: alice).events.types == [.memberJoined])
    }

    @Test func itemsShowTheirAddersLastNameAfterTheyLeave() throws {
        // Members' mirrors show the name the member last had; the server's view must agree.
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: bob)
        try jam.apply(.join(displayName: "Robert"), by: bob)
        try jam.apply(.leave, by: bob)
        #expect(jam.state.queueView().first?.addedBy == Member(userId: bob, displayName: "Robert", role: .member, connected: false))
    }

    @Test func aSessionFullWithItsHostAloneSaysOneMember() throws {
        var jam = try Jam(members: [], settings: SessionSettings(maxMembers: 1))
        jam.reject(.join(displayName: "Carol"), by: carol, .sessionFull)
        #expect(TextBytesTests.refusal(jam, .join(displayName: "Carol"), by: carol)?.message == "the session is full (1 member)")
        var three = try Jam(members: [alice, bob], settings: SessionSettings(maxMembers: 3))
        #expect(TextBytesTests.refusal(three, .join(displayName: "Carol"), by: carol)?.message == "the session is full (3 members)")
        three.reject(.join(displayName: "Carol"), by: carol, .sessionFull)
    }

    @Test func fullSessionRefusesNewMembers() throws {
        var jam = try Jam(members: [alice, bob], settings: SessionSettings(maxMembers: 3))
        jam.reject(.join(displayName: "Carol"), by: carol, .sessionFull)
        // Existing members may still rename.
        try jam.apply(.join(displayName: "Bobby"), by: bob)
        #expect(jam.state.member(bob)?.displayName == "Bobby")
        // A departure frees a place.
        try jam.apply(.leave, by: alice)
        try jam.apply(.join(displayName: "Carol"), by: carol)
        #expect(jam.state.members.map(\.userId) == [host, bob, carol])
    }

    @Test func nonMemberMayOnlyJoin() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        let commands: [Command] = [
            .leave, .connect, .disconnect, .add(track: track(9), nonce: "n", itemId: itemID(9)), .remove(itemId: itemID(2)),
            .vote(itemId: itemID(2), value: 1), .skip, .requestSkip, .play, .pause, .resume, .seek(positionMs: 0),
            .ready(epoch: 1), .syncReport(SyncReport(epoch: 1, offsetMs: 0, errorMs: 0, driftMs: 0)),
            .updateSettings(SettingsPatch(locked: true)), .setRole(userId: alice, role: .cohost), .kick(userId: alice),
            .setJoinCode("X"), .end,
        ]
        for command in commands { jam.reject(command, by: stranger, .notMember) }
    }

    @Test func connectionsAreCountedPerMember() throws {
        var jam = try Jam(connected: false)
        let first = try jam.apply(.connect, by: alice)
        #expect(first.events.map(\.event) == [.memberUpdated(Member(userId: alice, displayName: "Alice", role: .member, connected: true))])
        let second = try jam.apply(.connect, by: alice)
        #expect(second.events.isEmpty)
        #expect(jam.state.member(alice)?.connections == 2)
        #expect(try jam.apply(.disconnect, by: alice).events.isEmpty)
        #expect(jam.state.member(alice)?.connected == true)
        let last = try jam.apply(.disconnect, by: alice)
        #expect(last.events.map(\.event) == [.memberUpdated(Member(userId: alice, displayName: "Alice", role: .member, connected: false))])
        // An extra disconnect cannot go below zero.
        #expect(try jam.apply(.disconnect, by: alice).events.isEmpty)
        #expect(jam.state.member(alice)?.connections == 0)
        #expect(jam.state.connectedCount == 0)
    }

    @Test func memberLeaves() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.vote(2, 1, by: alice)
        let outcome = try jam.apply(.leave, by: alice)
        #expect(outcome.events.map(\.event) == [.memberLeft(MemberLeft(userId: alice, hostId: host))])
        #expect(jam.state.member(alice) == nil)
        // Their item stays, shown under the name they had.
        let item = try #require(jam.state.queueView().first)
        #expect(item.addedBy == Member(userId: alice, displayName: "Alice", role: .member, connected: false))
        #expect(item.score == 1)
        // Leaving is not a ban.
        try jam.apply(.join(displayName: "Alice again"), by: alice)
        #expect(jam.state.role(of: alice) == .member)
    }

    @Test func leaveOfTheLastMemberEndsTheSession() throws {
        var jam = try Jam(members: [alice])
        try jam.startPlaying(1)
        try jam.apply(.leave, by: host)
        let outcome = try jam.apply(.leave, by: alice)
        #expect(outcome.events.types == [.memberLeft, .sessionEnded])
        #expect(outcome.events.last?.event == .sessionEnded(SessionEnded(reason: "everybody left")))
        #expect(jam.state.hasEnded)
        #expect(jam.state.members.isEmpty)
        #expect(jam.state.current == nil)
        #expect(jam.state.history.map(\.item.id) == items(1))
        jam.reject(.join(displayName: "Alice"), by: alice, .gone)
    }

    @Test func kickBansRejoin() throws {
        var jam = try Jam()
        try jam.add(1, by: bob)
        let outcome = try jam.apply(.kick(userId: bob), by: host)
        #expect(outcome.events.first?.event == .memberLeft(MemberLeft(userId: bob, hostId: host)))
        #expect(jam.state.member(bob) == nil)
        #expect(jam.state.banned == [bob])
        jam.reject(.join(displayName: "Bob"), by: bob, .forbidden)
        jam.reject(.join(displayName: "Robert"), by: bob, .forbidden)
        // Anything else says the same, not "no member": a client offers to join again on that,
        // and a phone that was asleep at the kick reconnects with a connect.
        jam.reject(.vote(itemId: itemID(1), value: 1), by: bob, .forbidden)
        jam.reject(.connect, by: bob, .forbidden)
        // Leaving is done already: clients read notMember as that.
        jam.reject(.leave, by: bob, .notMember)
        #expect(jam.state.refusal(ofNonMember: bob).message == "the host removed you from this session")
        #expect(jam.state.refusal(ofNonMember: carol).code == .notMember)
        // Others still join.
        try jam.apply(.join(displayName: "Carol"), by: carol)
    }

    @Test func kickRules() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.apply(.setRole(userId: bob, role: .cohost), by: host)
        jam.reject(.kick(userId: host), by: host, .invalidField)
        jam.reject(.kick(userId: stranger), by: host, .notFound)
        jam.reject(.kick(userId: alice), by: bob, .forbidden)
        jam.reject(.kick(userId: carol), by: alice, .forbidden)
        try jam.apply(.kick(userId: bob), by: host)
        #expect(jam.state.member(bob) == nil)
    }

    @Test func kickingTheLastOtherMemberKeepsTheSession() throws {
        var jam = try Jam(members: [alice])
        try jam.apply(.kick(userId: alice), by: host)
        #expect(!jam.state.hasEnded)
        #expect(jam.state.members.map(\.userId) == [host])
    }

    @Test func leavingWithdrawsSkipRequestAndReadiness() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.add(1, by: host)
        try jam.apply(.ready(epoch: 1), by: alice)
        #expect(jam.state.readyMembers == [alice])
        try jam.apply(.leave, by: alice)
        #expect(jam.state.readyMembers.isEmpty)
        jam.advance(to: try jam.requireCurrent().commitBy)
        try jam.apply(.requestSkip, by: bob)
        #expect(jam.state.skipRequests == [bob])
        try jam.apply(.leave, by: bob)
        #expect(jam.state.skipRequests.isEmpty)
        #expect(jam.state.current?.item.id == itemID(1))
    }
}
