import JamCore
import JamProtocol
import Testing

@testable import JamServer

struct CommandBudgetTests {
    let alice: UserID = "alice"
    let bob: UserID = "bob"
    static let track = Track(id: "t", name: "T", artist: "A", durationMs: 1_000, source: .external)
    static let add = Command.add(track: track, nonce: "n", itemId: "i")

    /// Two adds at once, then one a second.
    var limits: CommandLimits {
        var limits = CommandLimits()
        limits.add = .init(capacity: 2, perSecond: 1)
        return limits
    }

    @Test func aBurstPassesAndTheNextWaitsForItsToken() {
        var budget = CommandBudget(limits: limits)
        #expect(budget.spend([.add], by: alice, at: 0) == .allowed)
        #expect(budget.spend([.add], by: alice, at: 100) == .allowed)
        #expect(budget.spend([.add], by: alice, at: 200) == .refused(.add, retryAfterMs: 800))
        #expect(budget.spend([.add], by: alice, at: 999) == .refused(.add, retryAfterMs: 1))
        #expect(budget.spend([.add], by: alice, at: 1_000) == .allowed)
    }

    @Test func anEmptyBucketRefillsFromAWallClockSetBackAsFromAnyOther() {
        var budget = CommandBudget(limits: limits)
        for _ in 0..<2 { _ = budget.spend([.add], by: alice, at: 3_600_000) }
        #expect(budget.spend([.add], by: alice, at: 3_600_000) == .refused(.add, retryAfterMs: 1_000))
        // The clock jumps an hour back: refused now, as it was, and one token later allowed.
        #expect(budget.spend([.add], by: alice, at: 0) == .refused(.add, retryAfterMs: 1_000))
        #expect(budget.spend([.add], by: alice, at: 1_000) == .allowed)
    }

    @Test func eachMemberAndEachKindHasItsOwnBucket() {
        var budget = CommandBudget(limits: limits)
        _ = budget.spend([.add], by: alice, at: 0)
        _ = budget.spend([.add], by: alice, at: 0)
        #expect(budget.spend([.add], by: alice, at: 0) != .allowed)
        #expect(budget.spend([.add], by: bob, at: 0) == .allowed)
        #expect(budget.spend([.vote], by: alice, at: 0) == .allowed)
    }

    @Test func eachOfAMembersDevicesHasItsOwnPingBucketButSharesTheOthers() {
        var budget = CommandBudget(limits: limits) // pings: the defaults, 60 then 4/s
        // Two devices of one member start listening at once: each sends its first burst of 48.
        for n in 0..<48 {
            #expect(budget.spend([.ping], by: alice, on: 1, at: Int64(n) * 30) == .allowed)
            #expect(budget.spend([.ping], by: alice, on: 2, at: Int64(n) * 30) == .allowed)
        }
        // One device beyond its own bucket is held back: 60 − 48 + 1.41 s × 4/s = 17.64 left.
        var more = 0
        while budget.spend([.ping], by: alice, on: 1, at: 1_410) == .allowed { more += 1 }
        #expect(more == 17)
        #expect(budget.spend([.ping], by: alice, on: 2, at: 1_410) == .allowed)
        // Adds (two at once here) stay the member's, whichever socket they come from.
        #expect(budget.spend([.add], by: alice, on: 1, at: 0) == .allowed)
        #expect(budget.spend([.add], by: alice, on: 2, at: 0) == .allowed)
        #expect(budget.spend([.add], by: alice, on: 3, at: 0) != .allowed)
    }

    @Test func aRefusedBatchCostsNothingAndOneBiggerThanTheBucketTakesAllOfIt() {
        var budget = CommandBudget(limits: limits)
        #expect(budget.spend([.add], by: alice, at: 0) == .allowed)
        #expect(budget.spend([.add, .add, .vote], by: alice, at: 0) == .refused(.add, retryAfterMs: 1_000))
        // Nothing was taken: the vote and the one add left still pass.
        #expect(budget.spend([.add, .vote], by: alice, at: 0) == .allowed)
        // A playlist of five at once, once the bucket is full again, empties it.
        #expect(budget.spend(Array(repeating: .add, count: 5), by: alice, at: 2_000) == .allowed)
        #expect(budget.spend([.add], by: alice, at: 2_000) == .refused(.add, retryAfterMs: 1_000))
    }

    @Test func tokensRefillOnlyUpToTheBurst() {
        var budget = CommandBudget(limits: limits)
        #expect(budget.spend([.add], by: alice, at: 0) == .allowed)
        // An hour later there are two again, not 3,600.
        #expect(budget.spend([.add, .add], by: alice, at: 3_600_000) == .allowed)
        #expect(budget.spend([.add], by: alice, at: 3_600_000) == .refused(.add, retryAfterMs: 1_000))
    }

    @Test func fullBucketsAreForgotten() {
        var budget = CommandBudget(limits: limits)
        _ = budget.spend([.add], by: alice, at: 0)
        _ = budget.spend([.vote], by: bob, at: 0)
        budget.prune(at: 400)
        #expect(budget.count == 2)
        // Bob's vote bucket (2/s) is full again at 0.5 s, Alice's add bucket (1/s) at 1 s.
        budget.prune(at: 500)
        #expect(budget.count == 1)
        budget.prune(at: 1_000)
        #expect(budget.count == 0)
    }

    @Test func commandsDrawFromTheBucketOfTheirKind() {
        #expect(CommandBudget.Kind.of(Self.add) == [.add])
        #expect(CommandBudget.Kind.of(.vote(itemId: "i", value: 1)) == [.vote])
        #expect(CommandBudget.Kind.of(.requestSkip) == [.skipRequest])
        #expect(CommandBudget.Kind.of(.skip) == [.other])
        #expect(CommandBudget.Kind.of(.all([Self.add, Self.add, .vote(itemId: "i", value: 0)])) == [.add, .add, .vote])
    }

    @Test func theDefaultsLetAClockBurstAndAPartyThrough() {
        var budget = CommandBudget(limits: CommandLimits())
        // ClockSync's burst: 24 pings 25 ms apart, every 15 s, for an hour.
        var refused = 0
        for burst in 0..<240 {
            for ping in 0..<24 where budget.spend([.ping], by: alice, at: Millis(burst * 15_000 + ping * 25)) != .allowed { refused += 1 }
        }
        #expect(refused == 0)
        // Ten songs queued at once.
        for n in 0..<10 { #expect(budget.spend([.add], by: bob, at: Millis(n)) == .allowed) }
    }
}
