import Foundation
import Testing
import JamCore
import JamProtocol

struct LimitsTests {
    @Test func historyKeepsTheMostRecentEntries() throws {
        var jam = try Jam()
        let total = SessionState.historyLimit + 5
        for n in 1...total {
            try jam.add(n, by: alice)
            try jam.apply(.skip, by: host)
        }
        #expect(jam.state.history.count == SessionState.historyLimit)
        #expect(jam.state.history.first?.item.id == itemID(6))
        #expect(jam.state.history.last?.item.id == itemID(total))
        #expect(jam.state.view(for: bob).history == jam.state.history)
        #expect(jam.state.epoch == Int64(total))
    }

    @Test func aQueueHoldsAThousandItemsHostsIncluded() throws {
        var jam = try Jam()
        let limit = try #require(SessionRules.openJam.maxQueueLength)
        #expect(limit == 1000)
        // The first add plays; the next thousand wait.
        for n in 1...(limit + 1) { try jam.add(n, by: host) }
        #expect(jam.state.queue.count == limit)
        jam.reject(.add(track: track(limit + 2), nonce: "one-more", itemId: itemID(limit + 2)), by: host, .queueLimit)
        // Once one has played, there is room again.
        try jam.apply(.skip, by: host)
        try jam.add(limit + 2, by: host)
        #expect(jam.state.queue.count == limit)
    }

    @Test func aSessionStoredBeforeTheQueueLimitKeepsNone() throws {
        let stored = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"scheduled"}"#.utf8))
        #expect(stored.maxQueueLength == nil)
    }

    @Test func nonceMemoryIsBoundedOldestFirst() throws {
        var jam = try Jam(settings: SessionSettings(allowDuplicates: true))
        let limit = SessionState.nonceLimit
        for n in 1...(limit + 1) {
            try jam.apply(.add(track: track(1), nonce: "n\(n)", itemId: itemID(n)), by: alice)
            try jam.apply(.skip, by: host)
        }
        #expect(jam.state.nonces.count == limit)
        #expect(jam.state.nonceOrder.count == limit)
        // The newest nonces are remembered...
        let retry = try jam.apply(.add(track: track(1), nonce: "n\(limit + 1)", itemId: itemID(999_999)), by: alice)
        #expect(retry.itemId == itemID(limit + 1))
        #expect(retry.events.isEmpty)
        // ...the oldest one was forgotten, so it counts as a new add.
        let forgotten = try jam.apply(.add(track: track(1), nonce: "n1", itemId: itemID(999_998)), by: alice)
        #expect(forgotten.itemId == itemID(999_998))
    }
}
