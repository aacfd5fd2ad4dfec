import Testing
import JamCore
import JamProtocol

struct QueueRemoveTests {
    func playingWithQueue() throws -> Jam {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.apply(.setRole(userId: carol, role: .cohost), by: host)
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        try jam.add(4, by: alice)
        return jam
    }

    @Test func adderRemovesTheirItem() throws {
        var jam = try playingWithQueue()
        let outcome = try jam.apply(.remove(itemId: itemID(2)), by: alice)
        // The others keep their order, so only the removed id goes out.
        #expect(outcome.events.types == [.queueItemRemoved])
        #expect(outcome.events.first?.event.queueItemRemoved == QueueItemRemoved(itemId: itemID(2)))
        #expect(jam.order == items(3, 4))
    }

    @Test func hostAndCohostRemoveAnyItem() throws {
        var jam = try playingWithQueue()
        try jam.apply(.remove(itemId: itemID(2)), by: host)
        try jam.apply(.remove(itemId: itemID(3)), by: carol)
        #expect(jam.order == items(4))
    }

    @Test func otherMembersMayNotRemove() throws {
        var jam = try playingWithQueue()
        jam.reject(.remove(itemId: itemID(2)), by: bob, .forbidden)
        jam.reject(.remove(itemId: itemID(3)), by: alice, .forbidden)
    }

    @Test func unknownItemIsNotFound() throws {
        var jam = try playingWithQueue()
        jam.reject(.remove(itemId: itemID(77)), by: host, .notFound)
        try jam.apply(.remove(itemId: itemID(2)), by: alice)
        jam.reject(.remove(itemId: itemID(2)), by: alice, .notFound)
    }

    @Test func playingItemCannotBeRemoved() throws {
        var jam = try playingWithQueue()
        jam.reject(.remove(itemId: itemID(1)), by: host, .conflict)
    }

    @Test func upNextItemCannotBeRemoved() throws {
        var jam = try playingWithQueue()
        jam.advanceToDeadline()
        let next = try #require(jam.state.upNext?.item.id)
        jam.reject(.remove(itemId: next), by: host, .conflict)
        jam.reject(.remove(itemId: next), by: alice, .conflict)
    }

    @Test func onlyHostsArePointedAtTheSkip() throws {
        var jam = try playingWithQueue()
        let state = jam.state
        #expect(throws: JamError(.conflict, "the item is playing now; skip it instead")) { var copy = state; _ = try copy.apply(.remove(itemId: itemID(1)), by: host, at: jam.now) }
        #expect(throws: JamError(.conflict, "the item is playing now and can no longer be removed")) { var copy = state; _ = try copy.apply(.remove(itemId: itemID(1)), by: alice, at: jam.now) }
        jam.advanceToDeadline()
        let next = try #require(jam.state.upNext?.item.id)
        let later = jam.state
        #expect(throws: JamError(.conflict, "the item is about to play; skip it when it starts")) { var copy = later; _ = try copy.apply(.remove(itemId: next), by: host, at: jam.now) }
        #expect(throws: JamError(.conflict, "the item is about to play and can no longer be removed")) { var copy = later; _ = try copy.apply(.remove(itemId: next), by: alice, at: jam.now) }
    }

    @Test func removingAnItemForgetsItsVotes() throws {
        var jam = try playingWithQueue()
        try jam.vote(3, 1, by: alice)
        try jam.apply(.remove(itemId: itemID(3)), by: bob)
        #expect(jam.state.view(for: alice).myVotes.isEmpty)
    }
}
