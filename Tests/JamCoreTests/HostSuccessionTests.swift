import Foundation
import Testing
import JamCore
import JamProtocol

struct HostSuccessionTests {
    /// Host (creator) at t0, then Alice, Bob, Carol one second apart.
    func staggered() throws -> Jam {
        var jam = try Jam(members: [])
        for member in [alice, bob, carol] {
            jam.wait(1_000)
            try jam.apply(.join(displayName: displayName(member)), by: member)
            try jam.apply(.connect, by: member)
        }
        return jam
    }

    @Test func creatorIsTheFirstHost() throws {
        let jam = try staggered()
        #expect(jam.state.hostId == host)
        #expect(jam.state.creatorId == host)
        #expect(jam.state.members.map(\.role) == [.host, .member, .member, .member])
    }

    @Test func longestPresentMemberSucceedsTheLeavingCreator() throws {
        var jam = try staggered()
        let outcome = try jam.apply(.leave, by: host)
        #expect(outcome.events.map(\.event) == [
            .memberLeft(MemberLeft(userId: host, hostId: alice)),
            .memberUpdated(Member(userId: alice, displayName: "Alice", role: .host, connected: true)),
        ])
        #expect(jam.state.hostId == alice)
        #expect(jam.state.role(of: alice) == .host)
        #expect(jam.state.infoView().hostDisplayName == "Alice")
        // And the chain continues.
        try jam.apply(.leave, by: alice)
        #expect(jam.state.hostId == bob)
    }

    @Test func theHostRolePassesToSomebodyConnectedWhenAnybodyIs() throws {
        var jam = try staggered()
        // Alice, longest present, closed her app; the creator disconnected too.
        try jam.apply(.disconnect, by: alice)
        try jam.apply(.setRole(userId: carol, role: .host), by: host)
        try jam.apply(.disconnect, by: host)
        try jam.apply(.leave, by: carol)
        #expect(jam.state.hostId == bob, "Bob is connected; the creator and Alice are away")
        // With nobody connected, presence decides as before: the creator first.
        try jam.apply(.disconnect, by: bob)
        try jam.apply(.leave, by: bob)
        #expect(jam.state.hostId == host)
    }

    @Test func whereAnyMemberMayTakeOverPresenceAloneDecides() throws {
        var jam = try Jam(members: [], rules: SessionRules(startMode: .scheduled, hostSuccession: .anyMember))
        for member in [alice, bob] {
            jam.wait(1_000)
            try jam.apply(.join(displayName: displayName(member)), by: member)
            try jam.apply(.connect, by: member)
        }
        try jam.apply(.disconnect, by: alice)
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == alice, "away, but longest present")
    }

    @Test func sessionsStoredBeforeTheRulesKeepHowTheyWereApplied() throws {
        let stored = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"scheduled"}"#.utf8))
        #expect(stored.hostSuccession == .anyMember, "their stored leaves replay as they were applied")
        #expect(!stored.cooldownOutlivesLeaving, "their stored adds replay as they were applied")
        #expect(SessionRules.openJam.hostSuccession == .connectedFirst)
        #expect(SessionRules.openJam.cooldownOutlivesLeaving)
    }

    @Test func joinOrderBreaksTiesWithinTheSameMillisecond() throws {
        var jam = try Jam(members: [carol, bob, alice])
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == carol)
    }

    @Test func rejoiningResetsPresence() throws {
        var jam = try staggered()
        try jam.apply(.leave, by: alice)
        jam.wait(1_000)
        try jam.apply(.join(displayName: "Alice"), by: alice)
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == bob)
    }

    @Test func creatorTakesBackTheHostRoleWhenPresent() throws {
        var jam = try staggered()
        try jam.apply(.setRole(userId: carol, role: .host), by: host)
        #expect(jam.state.hostId == carol)
        #expect(jam.state.role(of: host) == .cohost)
        let outcome = try jam.apply(.leave, by: carol)
        // The creator comes first, ahead of Alice who has been present longer than Carol.
        #expect(outcome.events.map(\.event) == [
            .memberLeft(MemberLeft(userId: carol, hostId: host)),
            .memberUpdated(Member(userId: host, displayName: "Host", role: .host, connected: true)),
        ])
        #expect(jam.state.hostId == host)
        #expect(jam.state.members.filter { $0.role == .host }.map(\.userId) == [host])
    }

    @Test func returningCreatorRegainsHostOnlyAtTheNextSuccession() throws {
        var jam = try staggered()
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == alice)
        jam.wait(1_000)
        try jam.apply(.join(displayName: "Host"), by: host)
        try jam.apply(.connect, by: host)
        #expect(jam.state.role(of: host) == .member)
        #expect(jam.state.hostId == alice)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.hostId == host)
        #expect(jam.state.role(of: host) == .host)
    }

    @Test func cohostsKeepTheirRoleAndDoNotJumpTheLine() throws {
        var jam = try staggered()
        try jam.apply(.setRole(userId: carol, role: .cohost), by: host)
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == alice)
        #expect(jam.state.role(of: carol) == .cohost)
        #expect(jam.state.role(of: bob) == .member)
    }

    @Test func cohostMayBecomeHostByPresence() throws {
        var jam = try staggered()
        try jam.apply(.setRole(userId: alice, role: .cohost), by: host)
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == alice)
        #expect(jam.state.role(of: alice) == .host)
    }

    /// A session that outlives its last member (something queued) with `rules`.
    func leftEmpty(_ rules: SessionRules) throws -> Jam {
        var jam = try Jam(members: [], rules: rules)
        try jam.add(1, by: host)
        try jam.apply(.leave, by: host)
        #expect(jam.state.members.isEmpty && !jam.state.hasEnded)
        return jam
    }

    @Test func theFirstToArriveInASessionLeftEmptyHostsIt() throws {
        var jam = try leftEmpty(SessionRules(startMode: .scheduled, emptyGraceMs: 60_000))
        try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(jam.state.hostId == alice)
        try jam.apply(.join(displayName: "Host"), by: host)
        #expect(jam.state.role(of: host) == .member)
    }

    @Test func whereTheHostIsKeptTheyHostAgainOnComingBack() throws {
        var jam = try leftEmpty(SessionRules(startMode: .djDriven, emptyGraceMs: 60_000, hostOfEmptySession: .kept))
        try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(jam.state.hostId == host, "the DJ stays DJ while away")
        #expect(jam.state.role(of: alice) == .member)
        try jam.apply(.join(displayName: "Host"), by: host)
        #expect(jam.state.role(of: host) == .host)
        #expect(jam.state.members.filter { $0.role == .host }.map(\.userId) == [host])
    }

    @Test func whereNobodySucceedsTheHostKeepsTheRoleWhileAwayAndHasItOnComingBack() throws {
        var jam = try Jam(members: [], rules: SessionRules(startMode: .hostDevice, hostOfEmptySession: .kept, hostSuccession: .nobody))
        for member in [alice, bob] {
            try jam.apply(.join(displayName: displayName(member)), by: member)
        }
        let outcome = try jam.apply(.leave, by: host)
        #expect(outcome.events.map(\.event) == [.memberLeft(MemberLeft(userId: host, hostId: host))])
        #expect(jam.state.hostId == host)
        #expect(jam.state.members.allSatisfy { $0.role == .member })
        try jam.apply(.join(displayName: "Carol"), by: carol)
        #expect(jam.state.role(of: carol) == .member, "nobody arriving takes the role either")
        jam.reject(.skip, by: alice, .forbidden)
        try jam.apply(.join(displayName: "Host"), by: host)
        #expect(jam.state.role(of: host) == .host)
        #expect(jam.state.members.filter { $0.role == .host }.map(\.userId) == [host])
    }

    @Test func aHostAwayWithNobodyTakingOverIsStillNamedAndTheNameGoesOnTheirReturn() throws {
        var jam = try Jam(members: [], rules: SessionRules(startMode: .hostDevice, hostOfEmptySession: .kept, hostSuccession: .nobody))
        try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(jam.state.absentHostName == nil)
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId == host)
        #expect(jam.state.absentHostName == "Host")
        try jam.apply(.join(displayName: "Host again"), by: host)
        #expect(jam.state.absentHostName == nil, "a member again: the member record names them")
    }

    @Test func aHostWhoseRolePassesOnLeavesNoNameBehind() throws {
        var jam = try staggered()
        try jam.apply(.leave, by: host)
        #expect(jam.state.hostId != host)
        #expect(jam.state.absentHostName == nil)
    }

    @Test func nonHostLeavingKeepsTheHost() throws {
        var jam = try staggered()
        let outcome = try jam.apply(.leave, by: bob)
        #expect(outcome.events.map(\.event) == [.memberLeft(MemberLeft(userId: bob, hostId: host))])
        #expect(jam.state.hostId == host)
    }

    @Test func kickedCreatorIsSkippedBySuccession() throws {
        var jam = try staggered()
        try jam.apply(.setRole(userId: bob, role: .host), by: host)
        try jam.apply(.kick(userId: host), by: bob)
        try jam.apply(.leave, by: bob)
        #expect(jam.state.hostId == alice)
    }

    @Test func hostPromotesAndDemotesCohosts() throws {
        var jam = try staggered()
        let promote = try jam.apply(.setRole(userId: bob, role: .cohost), by: host)
        #expect(promote.events.map(\.event) == [.memberUpdated(Member(userId: bob, displayName: "Bob", role: .cohost, connected: true))])
        #expect(try jam.apply(.setRole(userId: bob, role: .cohost), by: host).events.isEmpty)
        let demote = try jam.apply(.setRole(userId: bob, role: .member), by: host)
        #expect(demote.events.map(\.event) == [.memberUpdated(Member(userId: bob, displayName: "Bob", role: .member, connected: true))])
        #expect(jam.state.role(of: bob) == .member)
    }

    @Test func handingOverMakesTheOldHostACohost() throws {
        var jam = try staggered()
        let outcome = try jam.apply(.setRole(userId: bob, role: .host), by: host)
        #expect(outcome.events.map(\.event) == [
            .memberUpdated(Member(userId: host, displayName: "Host", role: .cohost, connected: true)),
            .memberUpdated(Member(userId: bob, displayName: "Bob", role: .host, connected: true)),
            .sessionUpdated(SessionUpdated(settings: SessionSettings(), name: "Test jam", joinCode: "ABC234")),
        ])
        #expect(jam.state.hostId == bob)
        #expect(jam.state.infoView().hostDisplayName == "Bob")
        // The former host keeps host controls but loses host-only ones.
        try jam.apply(.updateSettings(SettingsPatch(locked: true)), by: host)
        jam.reject(.kick(userId: alice), by: host, .forbidden)
        jam.reject(.setRole(userId: alice, role: .cohost), by: host, .forbidden)
    }

    @Test func roleChangeRules() throws {
        var jam = try staggered()
        jam.reject(.setRole(userId: host, role: .member), by: host, .invalidField)
        jam.reject(.setRole(userId: host, role: .host), by: host, .invalidField)
        jam.reject(.setRole(userId: stranger, role: .cohost), by: host, .notFound)
        try jam.apply(.setRole(userId: alice, role: .cohost), by: host)
        jam.reject(.setRole(userId: bob, role: .cohost), by: alice, .forbidden)
        jam.reject(.setRole(userId: host, role: .member), by: alice, .forbidden)
        jam.reject(.setRole(userId: carol, role: .cohost), by: bob, .forbidden)
    }
}
