import Testing
import JamCore
import JamProtocol

struct TwoPhaseStartTests {
    @Test func commitGoesOutAtTheDeadline() throws {
        var jam = try Jam()
        let t = jam.now
        try jam.add(1, by: alice)
        let current = try jam.requireCurrent()
        #expect(current.anchorMs == t + 500)
        #expect(current.commitBy == t + 350)
        #expect(jam.state.nextDeadline() == t + 350)
        #expect(jam.advance(to: t + 349).isEmpty)
        let events = jam.advance(to: t + 350)
        #expect(events.map(\.event) == [.playCommit(PlayCommit(itemId: itemID(1), epoch: 1, startAt: t + 500, positionMs: 0))])
        #expect(events.first?.timestamp == t + 350)
        #expect(jam.state.current?.state == .playing)
        #expect(jam.state.current?.position(at: t + 400) == 0)
        #expect(jam.state.current?.position(at: t + 500) == 0)
        #expect(jam.state.current?.position(at: t + 1_500) == 1_000)
        #expect(jam.state.nowPlayingView()?.position(at: t + 2_500) == 2_000)
    }

    @Test func commitGoesOutOnceEveryConnectedDeviceIsReady() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        jam.wait(100)
        #expect(try jam.apply(.ready(epoch: 1), by: host).events.isEmpty)
        #expect(try jam.apply(.ready(epoch: 1), by: alice).events.isEmpty)
        let last = try jam.apply(.ready(epoch: 1), by: bob)
        #expect(last.events.map(\.event) == [.playCommit(PlayCommit(itemId: itemID(1), epoch: 1, startAt: Jam.t0 + 500, positionMs: 0))])
        #expect(jam.state.current?.state == .playing)
        // The deadline has nothing left to do.
        #expect(jam.advance(to: Jam.t0 + 350).isEmpty)
    }

    @Test func readyForAnotherEpochIsIgnored() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        for epoch: Int64 in [0, 2, 99] {
            let before = jam.state
            #expect(try jam.apply(.ready(epoch: epoch), by: alice).events.isEmpty)
            #expect(jam.state == before)
        }
    }

    @Test func readyAfterTheCommitIsIgnored() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let before = jam.state
        #expect(try jam.apply(.ready(epoch: 1), by: alice).events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func offlineDevicesAreNotAwaited() throws {
        var jam = try Jam(members: [alice, bob], connected: false)
        try jam.apply(.connect, by: host)
        try jam.apply(.connect, by: alice)
        try jam.add(1, by: alice)
        try jam.apply(.ready(epoch: 1), by: host)
        #expect(try jam.apply(.ready(epoch: 1), by: alice).events.types == [.playCommit])
    }

    @Test func slowDeviceDisconnectingReleasesTheCommit() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        try jam.apply(.ready(epoch: 1), by: host)
        try jam.apply(.ready(epoch: 1), by: alice)
        let outcome = try jam.apply(.disconnect, by: bob)
        #expect(outcome.events.types == [.memberUpdated, .playCommit])
    }

    @Test func slowDeviceLeavingReleasesTheCommit() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        try jam.apply(.ready(epoch: 1), by: host)
        try jam.apply(.ready(epoch: 1), by: alice)
        let outcome = try jam.apply(.leave, by: bob)
        #expect(outcome.events.types == [.memberLeft, .playCommit])
    }

    @Test func readyDeviceDisconnectingMustReportAgain() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        try jam.apply(.ready(epoch: 1), by: alice)
        try jam.apply(.disconnect, by: alice)
        try jam.apply(.connect, by: alice)
        try jam.apply(.ready(epoch: 1), by: host)
        #expect(try jam.apply(.ready(epoch: 1), by: bob).events.isEmpty)
        #expect(try jam.apply(.ready(epoch: 1), by: alice).events.types == [.playCommit])
    }

    @Test func withNobodyConnectedTheDeadlineCommits() throws {
        var jam = try Jam(connected: false)
        let outcome = try jam.add(1, by: alice)
        #expect(outcome.events.types == [.playPrepare, .queueUpdate])
        #expect(try jam.apply(.ready(epoch: 1), by: alice).events.isEmpty)
        #expect(jam.advanceToDeadline().types == [.playCommit])
    }

    @Test func leadFollowsTheSlowestConnectedRoundTrip() throws {
        var jam = try Jam()
        #expect(jam.state.leadMs() == 500)
        try jam.apply(.syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: 400, driftMs: 0)), by: alice)
        try jam.apply(.syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: 100, driftMs: 0)), by: bob)
        #expect(jam.state.leadMs() == 1_600)
        let t = jam.now
        try jam.add(1, by: bob)
        #expect(jam.state.current?.anchorMs == t + 1_600)
        #expect(jam.state.current?.commitBy == t + 1_450)
        try jam.apply(.disconnect, by: alice)
        // Bob's 200 ms round trip gives 400 ms: the 500 ms floor applies.
        #expect(jam.state.leadMs() == 500)
        try jam.apply(.syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: 60_000, driftMs: 0)), by: bob)
        #expect(jam.state.leadMs() == 5_000)
    }

    @Test func timingIsConfigurable() throws {
        var jam = try Jam(timing: Timing(minLeadMs: 1_000, maxLeadMs: 2_000, prepareAheadMs: 10_000, commitMarginMs: 300))
        let t = jam.now
        try jam.add(1, by: alice)
        #expect(jam.state.current?.anchorMs == t + 1_000)
        #expect(jam.state.current?.commitBy == t + 700)
        try jam.add(2, by: alice)
        jam.advanceToDeadline()
        #expect(jam.state.nextDeadline() == t + 1_000 + 180_000 - 10_000)
    }
}
