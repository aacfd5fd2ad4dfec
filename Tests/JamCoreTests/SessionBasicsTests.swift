import Foundation
import Testing
import JamCore
import JamProtocol

struct SessionBasicsTests {
    @Test func newSessionStoresWhatItWasGiven() {
        let settings = SessionSettings(locked: true, ordering: .fair)
        let state = SessionState(id: sessionID, joinCode: "K7PQ2X", name: "Friday", creator: host, creatorName: "Host", settings: settings, now: 5_000)
        #expect(state.id == sessionID)
        #expect(state.joinCode == "K7PQ2X")
        #expect(state.name == "Friday")
        #expect(state.creatorId == host)
        #expect(state.hostId == host)
        #expect(state.createdAt == 5_000)
        #expect(state.settings == settings)
        #expect(state.timing == Timing())
        #expect(state.members.map(\.userId) == [host])
        #expect(state.role(of: host) == .host)
        #expect(state.member(host)?.displayName == "Host")
        #expect(state.member(host)?.connected == false)
        #expect(state.queue.isEmpty && state.current == nil && state.upNext == nil && state.history.isEmpty)
        #expect(state.epoch == 0)
        #expect(state.seq == 0)
        #expect(!state.hasEnded)
        // Nobody has connected yet: if nobody ever does, the session ends after a day.
        #expect(state.unattendedSince == 5_000)
        #expect(state.nextDeadline() == 5_000 + Timing.defaultAbandonAfterMs)
    }

    @Test func viewOfANewSession() {
        let state = SessionState(id: sessionID, joinCode: "K7PQ2X", name: "Friday", creator: host, creatorName: "Host", now: 5_000)
        #expect(state.view(for: host) == SessionView(
            session: SessionInfo(id: sessionID, joinCode: "K7PQ2X", name: "Friday", hostId: host, hostDisplayName: "Host", settings: SessionSettings(), createdAt: 5_000),
            members: [Member(userId: host, displayName: "Host", role: .host, connected: false)],
            nowPlaying: nil, queue: [], myVotes: [:],
            skipRequests: SkipRequestsView(count: 0, needed: 1, mine: false), history: [], upNext: nil))
    }

    @Test func viewReflectsTheLiveSession() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.vote(3, 1, by: alice)
        try jam.vote(2, -1, by: alice)
        try jam.apply(.requestSkip, by: alice)
        let view = jam.state.view(for: alice)
        #expect(view.session.hostId == host)
        #expect(view.session.hostDisplayName == "Host")
        #expect(view.members.map(\.userId) == [host, alice, bob])
        #expect(view.members.allSatisfy { $0.connected })
        #expect(view.nowPlaying?.item.id == itemID(1))
        #expect(view.nowPlaying?.state == .playing)
        #expect(view.nowPlaying?.epoch == 1)
        #expect(view.queue.map(\.id) == items(3, 2))
        #expect(view.queue.map(\.score) == [1, -1])
        #expect(view.queue.map(\.reason) == ["1 vote", "-1 vote"])
        #expect(view.queue.map(\.addedBy.displayName) == ["Bob", "Alice"])
        #expect(view.myVotes == [itemID(3).rawValue: 1, itemID(2).rawValue: -1])
        #expect(view.skipRequests == SkipRequestsView(count: 1, needed: 2, mine: true))
        #expect(jam.state.view(for: bob).myVotes.isEmpty)
        #expect(jam.state.view(for: bob).skipRequests.mine == false)
    }

    @Test func hostReplacesTheJoinCode() throws {
        var jam = try Jam()
        let seq = jam.state.seq
        let outcome = try jam.apply(.setJoinCode("ZZ9QW2"), by: host)
        #expect(outcome.events.map(\.event) == [.sessionUpdated(SessionUpdated(settings: SessionSettings(), name: "Test jam", joinCode: "ZZ9QW2"))])
        #expect(outcome.events.map(\.seq) == [seq + 1])
        #expect(jam.state.joinCode == "ZZ9QW2")
        #expect(jam.state.view(for: bob).session.joinCode == "ZZ9QW2")
    }

    @Test func hostEndsTheSession() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.wait(10_000)
        let outcome = try jam.apply(.end, by: host)
        #expect(outcome.events.map(\.event) == [.sessionEnded(SessionEnded(reason: "the host ended the session"))])
        #expect(jam.state.hasEnded)
        #expect(jam.state.endedAt == jam.now)
        #expect(jam.state.current == nil)
        let last = try #require(jam.state.history.last)
        #expect(last.item.id == itemID(1))
        #expect(last.outcome == .skipped)
        #expect(last.item.reason == "skipped")
        #expect(last.endedAt == jam.now)
        #expect(jam.state.nextDeadline() == nil)
    }

    @Test func endedSessionRefusesEveryCommand() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.end, by: host)
        let commands: [Command] = [
            .join(displayName: "New"), .leave, .connect, .disconnect,
            .add(track: track(9), nonce: "n9", itemId: itemID(9)), .add(track: track(2), nonce: "nonce-2", itemId: itemID(2)),
            .remove(itemId: itemID(2)), .vote(itemId: itemID(2), value: 1), .skip, .requestSkip, .play, .pause, .resume,
            .seek(positionMs: 1), .ready(epoch: 1), .syncReport(SyncReport(epoch: 1, offsetMs: 0, errorMs: 1, driftMs: 0)),
            .updateSettings(SettingsPatch(locked: true)), .setRole(userId: alice, role: .cohost), .kick(userId: bob),
            .setJoinCode("NEW"), .end, .all([]),
        ]
        for command in commands {
            for who in [host, alice, stranger] {
                jam.reject(command, by: who, .gone)
            }
        }
        let before = jam.state
        #expect(jam.advance(to: jam.now + 10_000_000).isEmpty)
        #expect(jam.state == before)
    }

    @Test func stateSurvivesAJSONRoundTrip() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.apply(.setRole(userId: bob, role: .cohost), by: host)
        try jam.apply(.syncReport(SyncReport(epoch: 0, offsetMs: 3.5, errorMs: 12.25, driftMs: 0.1)), by: alice)
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.add(4, by: carol)
        try jam.vote(3, 1, by: alice)
        try jam.vote(4, -1, by: bob)
        try jam.apply(.requestSkip, by: carol)
        try jam.apply(.kick(userId: carol), by: host)
        try jam.apply(.disconnect, by: bob)
        jam.advance(to: try jam.requireCurrent().endsAt! - 1_000)
        #expect(jam.state.upNext != nil)
        try jam.apply(.updateSettings(SettingsPatch(skipThreshold: 0.7, ordering: .fair)), by: host)
        try jam.apply(.requestSkip, by: alice)

        let data = try JSONEncoder().encode(jam.state)
        let decoded = try JSONDecoder().decode(SessionState.self, from: data)
        #expect(decoded == jam.state)
        #expect(decoded.banned == [carol])
        #expect(!decoded.nonces.isEmpty)

        // The decoded copy behaves exactly like the original.
        var copy = jam
        copy.state = decoded
        for step in 0..<4 {
            let a = jam.advanceToDeadline()
            let b = copy.advanceToDeadline()
            #expect(a == b, "step \(step)")
        }
        #expect(try jam.add(7, by: alice) == copy.add(7, by: alice))
        #expect(jam.state == copy.state)
    }

    @Test func endedStateSurvivesAJSONRoundTrip() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.apply(.end, by: host)
        let decoded = try JSONDecoder().decode(SessionState.self, from: try JSONEncoder().encode(jam.state))
        #expect(decoded == jam.state)
        #expect(decoded.hasEnded)
    }

    @Test func restartResetsConnections() throws {
        var jam = try Jam()
        try jam.add(1, by: host)
        try jam.apply(.ready(epoch: 1), by: alice)
        jam.state.resetConnections(at: 0)
        #expect(jam.state.connectedCount == 0)
        #expect(jam.state.readyMembers.isEmpty)
        #expect(jam.state.members.count == 3)
    }
}
