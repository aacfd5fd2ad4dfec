import Testing
import JamCore
import JamProtocol

struct VoteTests {
    func queued() throws -> Jam {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        return jam
    }

    @Test func upvoteRaisesTheScore() throws {
        var jam = try queued()
        let outcome = try jam.vote(3, 1, by: alice)
        #expect(outcome.score == 1)
        #expect(jam.order == items(3, 2))
        #expect(jam.state.view(for: alice).myVotes == [itemID(3).rawValue: 1])
    }

    @Test func voteThatMovesItsItemSendsTheNewIndexInsteadOfTheQueue() throws {
        var jam = try queued()
        let outcome = try jam.vote(3, 1, by: alice)
        #expect(outcome.events.types == [.votesUpdate])
        #expect(outcome.events[0].event.votesUpdate == VotesUpdate(itemId: itemID(3), score: 1, reason: "1 vote", movedTo: 0))
        // Back down: the item returns behind the one it passed.
        let down = try jam.vote(3, -1, by: alice)
        #expect(down.events.types == [.votesUpdate])
        #expect(down.events[0].event.votesUpdate == VotesUpdate(itemId: itemID(3), score: -1, reason: "-1 vote", movedTo: 1))
        #expect(jam.order == items(2, 3))
    }

    @Test func votesReplayedOntoTheQueueViewGiveTheServersOrder() throws {
        // What a client does with `movedTo` (take the item out, put it back at that index) must
        // always end in the order the server ranks, whatever the votes and tie-breaks.
        for seed in 0..<16 {
            var random = SeededRandom(seed: UInt64(seed))
            var jam = try Jam(members: [alice, bob, carol])
            try jam.startPlaying(1)
            for n in 2...7 { try jam.add(n, by: [alice, bob, carol][n % 3]) }
            var shown = jam.state.queueView().map(\.id)
            for step in 0..<60 {
                let item = Int(random.next() % 6) + 2
                let value = Int(random.next() % 3) - 1
                let voter = [alice, bob, carol][Int(random.next() % 3)]
                jam.wait(Millis(random.next() % 3))
                let outcome = try jam.vote(item, value, by: voter)
                #expect(!outcome.events.types.contains(.queueUpdate), "seed \(seed) step \(step)")
                for event in outcome.events.compactMap(\.event.votesUpdate) {
                    guard let movedTo = event.movedTo else { continue }
                    let from = try #require(shown.firstIndex(of: event.itemId))
                    #expect(movedTo != from, "seed \(seed) step \(step): a move to where the item stands")
                    shown.insert(shown.remove(at: from), at: movedTo)
                }
                #expect(shown == jam.order, "seed \(seed) step \(step)")
            }
        }
    }

    @Test func voteThatKeepsTheOrderSendsOnlyTheScoreWithItsReason() throws {
        var jam = try queued()
        let outcome = try jam.vote(2, 1, by: bob)
        #expect(outcome.events.types == [.votesUpdate])
        #expect(jam.order == items(2, 3))
        // No queueUpdate follows, so the new reason has to come with the score.
        #expect(outcome.events[0].event.votesUpdate == VotesUpdate(itemId: itemID(2), score: 1, reason: "1 vote"))
    }

    @Test func oneVotePerMemberPerItem() throws {
        var jam = try queued()
        try jam.vote(3, 1, by: alice)
        let before = jam.state
        let again = try jam.vote(3, 1, by: alice)
        #expect(again.events.isEmpty)
        #expect(again.score == 1)
        #expect(jam.state == before)
        #expect(jam.state.queue.first { $0.id == itemID(3) }?.votes == [alice: 1])
    }

    @Test func changingAVoteReplacesIt() throws {
        var jam = try queued()
        try jam.vote(3, 1, by: alice)
        let outcome = try jam.vote(3, -1, by: alice)
        #expect(outcome.score == -1)
        #expect(outcome.events.first?.event.votesUpdate == VotesUpdate(itemId: itemID(3), score: -1, reason: "-1 vote", movedTo: 1))
        #expect(jam.state.view(for: alice).myVotes == [itemID(3).rawValue: -1])
    }

    @Test func zeroClearsTheVote() throws {
        var jam = try queued()
        try jam.vote(3, -1, by: alice)
        let outcome = try jam.vote(3, 0, by: alice)
        #expect(outcome.score == 0)
        #expect(outcome.events.first?.event.votesUpdate == VotesUpdate(itemId: itemID(3), score: 0, reason: "no votes"))
        #expect(jam.state.queue.first { $0.id == itemID(3) }?.votes.isEmpty == true)
        #expect(jam.state.view(for: alice).myVotes.isEmpty)
        // Clearing a vote that is not there does nothing.
        let before = jam.state
        #expect(try jam.vote(3, 0, by: alice).events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func scoreIsTheSumOfVotes() throws {
        var jam = try queued()
        try jam.vote(2, 1, by: alice)
        try jam.vote(2, 1, by: bob)
        try jam.vote(2, 1, by: carol)
        let last = try jam.vote(2, -1, by: host)
        #expect(last.score == 2)
        #expect(jam.state.queueView().first { $0.id == itemID(2) }?.score == 2)
        #expect(jam.state.view(for: bob).myVotes == [itemID(2).rawValue: 1])
        #expect(jam.state.view(for: host).myVotes == [itemID(2).rawValue: -1])
    }

    @Test func voteOutsideRangeIsRefused() throws {
        var jam = try queued()
        jam.reject(.vote(itemId: itemID(2), value: 2), by: alice, .invalidField)
        jam.reject(.vote(itemId: itemID(2), value: -2), by: alice, .invalidField)
    }

    @Test func voteOnUnknownItemIsNotFound() throws {
        var jam = try queued()
        jam.reject(.vote(itemId: itemID(42), value: 1), by: alice, .notFound)
    }

    @Test func votesApplyOnlyToQueuedItems() throws {
        var jam = try queued()
        jam.reject(.vote(itemId: itemID(1), value: 1), by: alice, .conflict)
        jam.advanceToDeadline()
        let next = try #require(jam.state.upNext?.item.id)
        jam.reject(.vote(itemId: next, value: 1), by: alice, .conflict)
        let state = jam.state
        #expect(throws: JamError(.conflict, "votes only apply to queued items; this one is about to play")) {
            var copy = state
            _ = try copy.apply(.vote(itemId: next, value: 1), by: alice, at: jam.now)
        }
    }

    @Test func votesOfALeftMemberStillCount() throws {
        var jam = try queued()
        try jam.vote(3, 1, by: carol)
        try jam.apply(.leave, by: carol)
        #expect(jam.state.queueView().first?.id == itemID(3))
        #expect(jam.state.queueView().first?.score == 1)
    }

    @Test func reasonsDescribeTheScore() {
        #expect(QueueItem.votesReason(score: 0) == "no votes")
        #expect(QueueItem.votesReason(score: 1) == "1 vote")
        #expect(QueueItem.votesReason(score: -1) == "-1 vote")
        #expect(QueueItem.votesReason(score: 3) == "3 votes")
        #expect(QueueItem.votesReason(score: -2) == "-2 votes")
    }
}
