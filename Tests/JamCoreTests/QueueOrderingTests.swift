import Testing
import JamCore
import JamProtocol

struct VotesOrderingTests {
    @Test func highestScoreFirstWithReasons() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1)
        for n in 2...5 { try jam.add(n, by: alice) }
        try jam.vote(4, 1, by: alice)
        try jam.vote(4, 1, by: bob)
        try jam.vote(4, 1, by: carol)
        try jam.vote(3, 1, by: alice)
        try jam.vote(2, -1, by: bob)
        #expect(jam.order == items(4, 3, 5, 2))
        #expect(jam.reasons == ["3 votes", "1 vote", "no votes", "-1 vote"])
        #expect(jam.state.queueView().map(\.reason) == jam.reasons)
        #expect(jam.state.queueHead()?.id == itemID(4))
    }

    @Test func tiesGoToTheItemThatHeldTheScoreLongest() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        jam.wait(10)
        try jam.vote(3, 1, by: alice)
        jam.wait(10)
        try jam.vote(2, 1, by: bob)
        // Both score 1; item 3 got there first, although item 2 was added first.
        #expect(jam.order == items(3, 2))
    }

    @Test func returningToAScoreRestartsTheClock() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.wait(5)
        try jam.add(3, by: bob)
        jam.wait(5)
        try jam.vote(2, 1, by: bob)
        jam.wait(5)
        try jam.vote(2, 0, by: bob)
        // Item 2 is back at 0 only since now; item 3 has been at 0 since it was added.
        #expect(jam.order == items(3, 2))
    }

    @Test func withFallenFirstAnItemThatLostAVoteLeadsItsNewScore() throws {
        var jam = try Jam(rules: SessionRules(startMode: .scheduled, equalScores: .fallenFirst))
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.wait(5)
        try jam.add(3, by: bob)
        try jam.add(4, by: bob)
        jam.wait(5)
        try jam.vote(2, 1, by: bob)
        try jam.vote(3, 1, by: alice)
        jam.wait(5)
        try jam.vote(2, 0, by: bob)
        // Item 2 fell back to 0 and leads it; item 4 rose to it (on its add) and follows.
        #expect(jam.order == items(3, 2, 4))
        #expect(jam.state.queueHead()?.id == itemID(3))
        jam.wait(5)
        try jam.vote(3, 0, by: alice)
        // The latest to fall leads: item 3, then item 2, then those that never fell.
        #expect(jam.order == items(3, 2, 4))
        try jam.vote(4, 1, by: alice)
        jam.wait(5)
        try jam.vote(4, -1, by: alice)
        // Item 4 fell through 0 to -1: alone there, after every 0.
        #expect(jam.order == items(3, 2, 4))
        #expect(jam.state.queue.first { $0.id == itemID(4) }?.scoreFell == true)
    }

    @Test func equalScoresSinceTheSameInstantKeepAddOrder() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        for n in 2...6 { try jam.add(n, by: n.isMultiple(of: 2) ? alice : bob) }
        #expect(jam.order == items(2, 3, 4, 5, 6))
        #expect(jam.reasons == Array(repeating: "no votes", count: 5))
    }

    @Test func rankingFunctionIsAPureSort() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        for n in 2...4 { try jam.add(n, by: alice) }
        try jam.vote(4, 1, by: bob)
        #expect(QueueRanking.byVotes(jam.state.queue).map(\.id) == items(4, 2, 3))
        #expect(QueueRanking.byVotes(jam.state.queue.reversed()).map(\.id) == items(4, 2, 3))
    }
}

struct FairOrderingTests {
    func fairJam() throws -> Jam {
        try Jam(members: [alice, bob, carol], settings: SessionSettings(ordering: .fair))
    }

    @Test func membersTakeTurnsWithReasons() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: host)
        for n in [2, 3, 4] { try jam.add(n, by: alice) }
        for n in [5, 6] { try jam.add(n, by: bob) }
        try jam.add(7, by: carol)
        #expect(jam.order == items(2, 5, 7, 3, 6, 4))
        #expect(jam.reasons == [
            "Alice's turn", "Bob's turn", "Carol's turn", "Alice's turn, round 2", "Bob's turn, round 2", "Alice's turn, round 3",
        ])
        #expect(jam.state.queueView().map(\.reason) == jam.reasons)
        #expect(jam.state.queueHead()?.id == itemID(2))
    }

    @Test func votesDecideWithinAMembersList() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: host)
        for n in [2, 3, 4] { try jam.add(n, by: alice) }
        try jam.add(5, by: bob)
        try jam.vote(4, 1, by: bob)
        try jam.vote(5, -1, by: carol)
        #expect(jam.order == items(4, 5, 2, 3))
    }

    @Test func aVoteCarriesTheItemsFairReason() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: host)
        for n in [2, 3] { try jam.add(n, by: alice) }
        try jam.add(4, by: bob)
        // Alice's second item overtakes her first: its round changes with its score.
        let outcome = try jam.vote(3, 1, by: bob)
        #expect(outcome.events.first?.event.votesUpdate == VotesUpdate(itemId: itemID(3), score: 1, reason: "Alice's turn"))
    }

    @Test func memberWhoseItemStartedGoesToTheBack() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: alice)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.add(4, by: carol)
        // Alice's item plays now: she added first but waits for the others.
        #expect(jam.order == items(3, 4, 2))
        try jam.apply(.skip, by: host)
        #expect(jam.state.current?.item.id == itemID(3))
        #expect(jam.order == items(4, 2))
        try jam.add(5, by: bob)
        #expect(jam.order == items(4, 2, 5))
    }

    @Test func hostTakesTurnsLikeEveryoneElse() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: alice)
        try jam.add(2, by: host)
        try jam.add(3, by: host)
        try jam.add(4, by: alice)
        #expect(jam.order == items(2, 4, 3))
        #expect(jam.reasons == ["Host's turn", "Alice's turn", "Host's turn, round 2"])
    }

    @Test func reasonsUseTheCurrentNameOrTheRememberedOne() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: host)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.apply(.join(displayName: "Ali"), by: alice)
        try jam.apply(.leave, by: bob)
        #expect(jam.reasons == ["Ali's turn", "Bob's turn"])
    }

    @Test func aRenameSendsTheQueueWithTheNewNameInItsReasons() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: host)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        let renamed = try jam.apply(.join(displayName: "Ali"), by: alice).events.map(\.event)
        let queues = renamed.compactMap { event -> [String]? in
            if case .queueUpdate(let update) = event { return update.queue.map(\.reason) }
            return nil
        }
        #expect(queues == [["Ali's turn", "Bob's turn"]])
        // Without items of theirs, nothing names them.
        let carolRenamed = try jam.apply(.join(displayName: "Caro"), by: carol).events.map(\.event)
        #expect(!carolRenamed.contains { if case .queueUpdate = $0 { true } else { false } })
    }

    @Test func soleMemberWithItemsPlaysOnAndOn() throws {
        var jam = try fairJam()
        try jam.startPlaying(1, by: alice)
        try jam.add(2, by: alice)
        try jam.add(3, by: alice)
        #expect(jam.order == items(2, 3))
        #expect(jam.reasons == ["Alice's turn", "Alice's turn, round 2"])
    }
}
