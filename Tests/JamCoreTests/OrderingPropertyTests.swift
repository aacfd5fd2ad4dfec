import Testing
import JamCore
import JamProtocol

/// Property tests of the ordering invariants over seeded random sequences of adds, votes, clears and removals.
struct VotesOrderingPropertyTests {
    /// An independent model of the `votes` rule: score, when the score last changed, and add order.
    struct ModelItem {
        var votes: [UserID: Int] = [:]
        var since: Millis
        var addIndex: Int
        var score: Int { votes.values.reduce(0, +) }
    }

    static let voters = [host, alice, bob, carol, dave]

    @Test(arguments: 1...30)
    func votesOrderMatchesTheRuleAndIsStable(_ seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 7919)
        var jam = try Jam(members: [alice, bob, carol, dave], settings: SessionSettings(maxQueuedPerMember: SessionSettings.queueLimit))
        try jam.startPlaying(1, durationMs: nil)  // never ends: the queue only moves by votes
        var model: [ItemID: ModelItem] = [:]
        var nextTrack = 2
        var addIndex = 0
        var votesCast = 0
        var tiesSeen = 0

        for step in 0..<200 {
            jam.wait(Millis(rng.int(0...2)))
            let before = jam.order
            var changed: Set<ItemID> = []
            let roll = rng.below(100)
            if roll < 20 || model.isEmpty {
                let n = nextTrack
                nextTrack += 1
                try jam.add(n, by: rng.pick(Self.voters))
                model[itemID(n)] = ModelItem(since: jam.now, addIndex: addIndex)
                addIndex += 1
            } else if roll < 85 {
                let item = rng.pick(model.keys.sorted())
                let voter = rng.pick(Self.voters)
                let value = rng.int(-1...1)
                let outcome = try jam.apply(.vote(itemId: item, value: value), by: voter)
                let old = model[item]!.score
                model[item]!.votes[voter] = value == 0 ? nil : value
                let new = model[item]!.score
                if new != old {
                    model[item]!.since = jam.now
                    changed.insert(item)
                }
                #expect(outcome.score == new)
                votesCast += 1
            } else {
                let item = rng.pick(model.keys.sorted())
                try jam.apply(.remove(itemId: item), by: host)
                model[item] = nil
            }

            let ranked = jam.state.rankedQueue()
            let after = ranked.map(\.item.id)
            // The model's order is the order: score desc, then held longest, then added first.
            let expected = model.sorted { a, b in
                if a.value.score != b.value.score { return a.value.score > b.value.score }
                if a.value.since != b.value.since { return a.value.since < b.value.since }
                return a.value.addIndex < b.value.addIndex
            }.map(\.key)
            #expect(after == expected, "seed \(seed) step \(step)")

            // (a) Sorted by score, descending, with the matching reason.
            let scores = ranked.map(\.item.score)
            #expect(scores == scores.sorted(by: >), "seed \(seed) step \(step)")
            #expect(ranked.map(\.reason) == scores.map(QueueItem.votesReason), "seed \(seed) step \(step)")
            #expect(jam.state.queueView().map(\.score) == after.map { model[$0]!.score })

            // (b) Items whose score did not change keep their relative order.
            let survivors = Set(before).intersection(after).subtracting(changed)
            #expect(before.filter(survivors.contains) == after.filter(survivors.contains), "seed \(seed) step \(step)")
            let ties = zip(ranked, ranked.dropFirst()).filter { $0.item.score == $1.item.score }
            tiesSeen += ties.count
            #expect(ties.allSatisfy { $0.item.scoreSince <= $1.item.scoreSince }, "equal scores: the one held longer goes first")
        }
        #expect(votesCast > 100)
        #expect(tiesSeen > 50)
    }

    @Test func votingOneItemNeverMovesEqualNeighbours() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1, durationMs: nil)
        for n in 2...7 { try jam.add(n, by: alice) }
        // Items 2..7 all score 0 since the same instant; vote the middle one around.
        for value in [1, 0, -1, 0, 1, -1] {
            jam.wait(1)
            try jam.vote(4, value, by: bob)
            let others = jam.order.filter { $0 != itemID(4) }
            #expect(others == items(2, 3, 5, 6, 7))
        }
    }
}

/// `fair`: one member never gets two turns in a row while another member still has items waiting.
struct FairOrderingPropertyTests {
    static let adders = [host, alice, bob, carol]

    /// The queue order shows turns: a member's items sit next to each other only when nobody else has any left.
    func checkQueue(_ state: SessionState, _ context: @autoclosure () -> Comment) {
        let ranked = state.rankedQueue()
        let adders = ranked.map(\.item.addedBy)
        let consecutiveOK = adders.indices.dropLast().allSatisfy { index in
            adders[index] != adders[index + 1] || adders[(index + 1)...].allSatisfy { $0 == adders[index] }
        }
        #expect(consecutiveOK, "a member's items are adjacent while others still wait: \(context())")
        // The member whose turn was just taken (the up-next item, else the current one) does not go first either.
        if let last = state.upNext?.item.addedBy ?? state.current?.item.addedBy, adders.first == last {
            #expect(adders.allSatisfy { $0 == last }, "the member who just had a turn goes first: \(context())")
        }
        // Reasons count each member's rounds; votes decide within a member's list.
        var seen: [UserID: Int] = [:]
        var expectedReasons: [String] = []
        for entry in ranked {
            let round = seen[entry.item.addedBy, default: 0]
            seen[entry.item.addedBy] = round + 1
            let name = state.member(entry.item.addedBy)?.displayName ?? entry.item.addedByName
            expectedReasons.append(round == 0 ? "\(name)'s turn" : "\(name)'s turn, round \(round + 1)")
        }
        #expect(ranked.map(\.reason) == expectedReasons, "\(context())")
        let votesDecide = Set(adders).allSatisfy { adder in
            let scores = ranked.filter { $0.item.addedBy == adder }.map(\.item.score)
            return scores == scores.sorted(by: >)
        }
        #expect(votesDecide, "\(context())")
    }

    @Test(arguments: 1...30)
    func queueOrderAndSelectionsTakeTurns(_ seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 104_729)
        var jam = try Jam(members: [alice, bob, carol], settings: SessionSettings(maxQueuedPerMember: 100, ordering: .fair))
        var nextTrack = 1
        var selections = 0
        var sameAdderSelections = 0

        for step in 0..<250 {
            let pre = jam.state
            var addedBy: UserID?
            let roll = rng.below(100)
            if roll < 25 {
                let n = nextTrack
                nextTrack += 1
                let who = rng.pick(Self.adders)
                try jam.add(n, by: who, durationMs: Int64(rng.int(20...40)) * 1_000)
                addedBy = who
            } else if roll < 55, !jam.state.queue.isEmpty {
                try jam.apply(.vote(itemId: rng.pick(jam.state.queue.map(\.id)), value: rng.int(-1...1)), by: rng.pick(Self.adders))
            } else if roll < 65, !jam.state.queue.isEmpty {
                try jam.apply(.remove(itemId: rng.pick(jam.state.queue.map(\.id))), by: host)
            } else if roll < 75, jam.state.current != nil {
                try jam.apply(.skip, by: host)
            } else if roll < 95 {
                jam.advanceToDeadline()
            } else {
                jam.wait(Millis(rng.int(0...1_000)))
            }
            let context: Comment = "seed \(seed) step \(step)"
            checkQueue(jam.state, context)

            // Each time an item is chosen from the queue, look at who had the previous turn.
            var waiting = Set(pre.queue.map(\.addedBy))
            if let addedBy { waiting.insert(addedBy) }
            var chosen: (item: ItemRecord, previous: UserID?)?
            if let upNext = jam.state.upNext, upNext.item.id != pre.upNext?.item.id {
                #expect(jam.state.current?.item.id == pre.current?.item.id, context)
                chosen = (upNext.item, jam.state.current?.item.addedBy)
            } else if let current = jam.state.current, current.item.id != pre.current?.item.id, current.item.id != pre.upNext?.item.id {
                chosen = (current.item, pre.current?.item.addedBy)
            }
            if let chosen {
                selections += 1
                if chosen.item.addedBy == chosen.previous {
                    sameAdderSelections += 1
                    #expect(waiting == [chosen.item.addedBy], "a second turn in a row while others wait: \(context)")
                }
            }
        }
        #expect(selections > 30)
        #expect(sameAdderSelections < selections)
    }

    @Test(arguments: 1...30)
    func playOutNeverGivesTwoTurnsInARowWhileOthersWait(_ seed: Int) throws {
        var rng = SeededRandom(seed: UInt64(seed) &* 31_337)
        var jam = try Jam(members: [alice, bob, carol], settings: SessionSettings(maxQueuedPerMember: 100, ordering: .fair))
        // Something plays, then members queue unevenly and vote.
        try jam.startPlaying(0, by: rng.pick(Self.adders), durationMs: 30_000)
        let count = rng.int(8...24)
        for n in 1...count {
            let who = Self.adders[min(rng.below(6), 3)]  // skewed: Carol adds the most
            try jam.add(n, by: who, durationMs: Int64(rng.int(20...60)) * 1_000)
        }
        for _ in 0..<rng.int(0...30) {
            try jam.apply(.vote(itemId: itemID(rng.int(1...count)), value: rng.int(-1...1)), by: rng.pick(Self.adders))
        }
        let queued = jam.state.queue
        let expectedWithinMember = Dictionary(grouping: QueueRanking.byVotes(queued), by: \.addedBy).mapValues { $0.map(\.id) }

        // Play everything out through a mix of host skips and auto-advance.
        var played: [ItemRecord] = []
        var lastCurrent = jam.state.current?.item.id
        var guardSteps = 0
        while jam.state.current != nil, guardSteps < 10_000 {
            guardSteps += 1
            if rng.chance(40) {
                try jam.apply(.skip, by: host)
            } else {
                jam.advanceToDeadline()
            }
            checkQueue(jam.state, "seed \(seed)")
            if let current = jam.state.current, current.item.id != lastCurrent {
                played.append(current.item)
                lastCurrent = current.item.id
            }
        }
        #expect(jam.state.current == nil)
        #expect(played.count == count, "every queued item plays exactly once (seed \(seed))")
        #expect(Set(played.map(\.id)) == Set(queued.map(\.id)))

        // Two turns in a row for one member only once nobody else has anything left.
        let adders = played.map(\.addedBy)
        for index in adders.indices.dropLast() where adders[index] == adders[index + 1] {
            #expect(adders[(index + 1)...].allSatisfy { $0 == adders[index] }, "seed \(seed): \(adders.map { displayName($0) })")
        }
        // Within a member, votes decided the order.
        for (adder, ids) in expectedWithinMember {
            #expect(played.filter { $0.addedBy == adder }.map(\.id) == ids, "seed \(seed)")
        }
    }

    @Test func upNextCountsAsATakenTurn() throws {
        var jam = try Jam(settings: SessionSettings(ordering: .fair))
        try jam.startPlaying(1, by: host)
        try jam.add(2, by: alice)
        try jam.add(3, by: alice)
        try jam.add(4, by: bob)
        #expect(jam.order == items(2, 4, 3))
        let events = jam.advanceToDeadline()
        #expect(jam.state.upNext?.item.id == itemID(2))
        // Alice's item is next; Bob's turn comes before her second one, in the view and in the broadcast.
        #expect(jam.order == items(4, 3))
        #expect(events.last?.event.queueUpdate?.queue.map(\.id) == items(4, 3))
        #expect(jam.reasons == ["Bob's turn", "Alice's turn"])
        jam.advanceToDeadline()
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.order == items(4, 3))
        jam.advanceToDeadline()
        #expect(jam.state.upNext?.item.id == itemID(4))
    }
}
