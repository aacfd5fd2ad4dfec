import Testing
import JamCore
import JamProtocol

struct QueueAddTests {
    @Test func firstAddWhenIdleStartsPlayingAtOnce() throws {
        var jam = try Jam()
        let outcome = try jam.add(1, by: alice)
        #expect(outcome.itemId == itemID(1))
        #expect(outcome.events.types == [.playPrepare, .skipRequests, .queueUpdate])
        let prepare = try #require(outcome.events.first?.event.playPrepare)
        #expect(prepare.item.id == itemID(1))
        #expect(prepare.item.track == track(1))
        #expect(prepare.item.addedBy == Member(userId: alice, displayName: "Alice", role: .member, connected: true))
        #expect(prepare.item.addedAt == jam.now)
        #expect(prepare.item.reason == "now playing")
        #expect(prepare.epoch == 1)
        #expect(prepare.startAt == jam.now + 500)
        #expect(prepare.previous == nil)
        #expect(outcome.events.first?.epoch == 1)
        #expect(outcome.events[1].event.skipRequests == SkipRequestsUpdate(count: 0, needed: 2))
        #expect(outcome.events[2].event.queueUpdate == QueueUpdate(queue: []))
        let current = try jam.requireCurrent()
        #expect(current.item.id == itemID(1))
        #expect(current.state == .preparing)
        #expect(current.anchorMs == jam.now + 500)
        #expect(current.startedAt == jam.now)
        #expect(jam.state.queue.isEmpty)
        #expect(jam.state.epoch == 1)
    }

    @Test func laterAddsWaitInTheQueue() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let outcome = try jam.add(2, by: bob)
        #expect(outcome.itemId == itemID(2))
        // Only the new item is new: it goes alone, with its place in the play order.
        #expect(outcome.events.types == [.queueItemAdded])
        let added = try #require(outcome.events.first?.event.queueItemAdded)
        #expect(added.item.id == itemID(2))
        #expect(added.item.addedBy == Member(userId: bob, displayName: "Bob", role: .member, connected: true))
        #expect(added.item.reason == "no votes")
        #expect(added.item.score == 0)
        #expect(added.index == 0)
        #expect(jam.state.current?.item.id == itemID(1))
        #expect(jam.state.epoch == 1)
    }

    @Test func anAddedItemIsPlacedAfterItemsWithVotesAndBeforeItemsVotedDown() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1)
        for n in 2...4 { try jam.add(n, by: alice) }
        try jam.vote(2, 1, by: bob)
        try jam.vote(4, -1, by: bob)
        #expect(jam.order == items(2, 3, 4))
        let outcome = try jam.add(5, by: carol)
        #expect(outcome.events.first?.event.queueItemAdded?.index == 2)
        #expect(jam.order == items(2, 3, 5, 4))
    }

    @Test func inFairOrderingAnAddSendsTheWholeQueue() throws {
        // A new member's item can take a turn ahead of others and change their reasons.
        var jam = try Jam(members: [alice, bob, carol])
        try jam.apply(.updateSettings(SettingsPatch(ordering: .fair)), by: host)
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: alice)
        let outcome = try jam.add(4, by: bob)
        #expect(outcome.events.types == [.queueUpdate])
        #expect(outcome.events.first?.event.queueUpdate?.queue.map(\.id) == jam.order)
    }

    @Test func sameNonceTwiceIsOneAdd() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let first = try jam.apply(.add(track: track(2), nonce: "retry-me", itemId: itemID(2)), by: alice)
        let before = jam.state
        // The retry may even carry a freshly minted item ID: the answer is the first item.
        let second = try jam.apply(.add(track: track(2), nonce: "retry-me", itemId: itemID(3)), by: alice)
        #expect(second.itemId == first.itemId)
        #expect(second.events.isEmpty)
        #expect(jam.state == before)
        #expect(jam.state.queue.count == 1)
    }

    @Test func sameNonceTwiceWhenIdleIsOnePlay() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        let before = jam.state
        let retry = try jam.add(1, by: alice)
        #expect(retry.itemId == itemID(1))
        #expect(retry.events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func onlyTheSameMembersSameNonceCountsAsARepeatedAdd() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        #expect(jam.state.repeatedAdd(nonce: "n", by: alice) == nil)
        try jam.apply(.add(track: track(2), nonce: "n", itemId: itemID(2)), by: alice)
        #expect(jam.state.repeatedAdd(nonce: "n", by: alice) == itemID(2))
        #expect(jam.state.repeatedAdd(nonce: "n", by: bob) == nil)
        #expect(jam.state.repeatedAdd(nonce: "m", by: alice) == nil)
    }

    @Test func noncesArePerMember() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.apply(.add(track: track(2), nonce: "same", itemId: itemID(2)), by: alice)
        let bobs = try jam.apply(.add(track: track(3), nonce: "same", itemId: itemID(3)), by: bob)
        #expect(bobs.itemId == itemID(3))
        #expect(jam.state.queue.map(\.id) == items(2, 3))
    }

    @Test func nonceRetryAfterRemovalStillAnswersTheOriginalItem() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.remove(itemId: itemID(2)), by: alice)
        let before = jam.state
        let retry = try jam.add(2, by: alice)
        #expect(retry.itemId == itemID(2))
        #expect(retry.events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func queuedTrackIsADuplicate() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.reject(.add(track: track(2), nonce: "other", itemId: itemID(9)), by: bob, .duplicate)
        jam.reject(.add(track: track(2), nonce: "other", itemId: itemID(9)), by: alice, .duplicate)
    }

    @Test func playingTrackIsADuplicate() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.reject(.add(track: track(1), nonce: "again", itemId: itemID(9)), by: bob, .duplicate)
    }

    @Test func preparingTrackIsADuplicate() throws {
        var jam = try Jam()
        try jam.add(1, by: alice)
        #expect(jam.state.current?.state == .preparing)
        jam.reject(.add(track: track(1), nonce: "again", itemId: itemID(9)), by: bob, .duplicate)
    }

    @Test func upNextTrackIsADuplicate() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.advanceToDeadline()
        #expect(jam.state.upNext?.item.id == itemID(2))
        jam.reject(.add(track: track(2), nonce: "again", itemId: itemID(9)), by: bob, .duplicate)
    }

    @Test func sameIdFromAnotherSourceIsNotADuplicate() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.apply(.add(track: track(1, source: .spotify), nonce: "s", itemId: itemID(2)), by: alice)
        #expect(jam.state.queue.map(\.track.source) == [.spotify])
    }

    @Test func playedTrackMayBeAddedAgain() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.apply(.skip, by: host)
        #expect(jam.state.current == nil)
        try jam.apply(.add(track: track(1), nonce: "again", itemId: itemID(2)), by: alice)
        #expect(jam.state.current?.item.id == itemID(2))
    }

    @Test func invalidAddsChangeNothing() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.reject(.add(track: Track(id: "x", name: "", artist: "a"), nonce: "n", itemId: itemID(9)), by: alice, .invalidField)
        jam.reject(.add(track: Track(id: "x", name: "n", artist: "a", durationMs: 0), nonce: "n", itemId: itemID(9)), by: alice, .invalidField)
        jam.reject(.add(track: track(9), nonce: "", itemId: itemID(9)), by: alice, .invalidField)
        jam.reject(.add(track: track(9), nonce: String(repeating: "n", count: 129), itemId: itemID(9)), by: alice, .invalidField)
    }

    @Test func takenItemIdIsAConflict() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.reject(.add(track: track(3), nonce: "x", itemId: itemID(2)), by: bob, .conflict)
        jam.reject(.add(track: track(3), nonce: "y", itemId: itemID(1)), by: bob, .conflict)
    }

    @Test func addNearTheEndPreparesTheNextItemAtOnce() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let endsAt = try #require(jam.requireCurrent().endsAt)
        jam.advance(to: endsAt - 3_000)
        #expect(jam.state.upNext == nil)
        let outcome = try jam.add(2, by: alice)
        #expect(outcome.events.types == [.queueItemAdded, .playPrepare, .queueUpdate])
        let prepare = try #require(outcome.events[1].event.playPrepare)
        #expect(prepare.item.id == itemID(2))
        #expect(prepare.epoch == 2)
        #expect(prepare.startAt == endsAt)
        #expect(prepare.item.reason == "up next")
        #expect(jam.state.upNext?.item.id == itemID(2))
        #expect(jam.state.queue.isEmpty)
    }

    @Test func addWithoutDurationStillPlays() throws {
        var jam = try Jam()
        try jam.startPlaying(1, durationMs: nil)
        #expect(jam.state.current?.state == .playing)
        #expect(jam.state.nextDeadline() == nil)
        try jam.add(2, by: alice)
        #expect(jam.advance(to: jam.now + 100_000_000).isEmpty)
        #expect(jam.state.current?.item.id == itemID(1))
    }
}
