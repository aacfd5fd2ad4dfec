import JamCore
import JamProtocol
import Testing

@testable import JamQueueIT

/// `entered_tier_by_gain` as the app sorts by it: it must agree with the order the session
/// plays in, also for a session stored before the profile ordered by tiers.
@Suite struct TierFlagTests {
    static let host: UserID = "00000000-0000-0000-0000-0000000000a1"
    static let guest: UserID = "00000000-0000-0000-0000-0000000000b0"

    /// A host-device session under `rule` where the guest voted item 3 up and took it back.
    static func fallen(under rule: SessionRules.EqualScores) throws -> SessionState {
        var state = SessionState(
            id: "00000000-0000-0000-0000-00000000005e", joinCode: "PARTY1", name: "Party", creator: host, creatorName: "Ann",
            rules: SessionRules(startMode: .hostDevice, equalScores: rule), now: 1_000)
        _ = try state.apply(.join(displayName: "Bob"), by: guest, at: 1_000)
        for n in 1...3 {
            let track = Track(id: "song-\(n)", name: "Song \(n)", artist: "Band", durationMs: 200_000, source: .spotify)
            _ = try state.apply(.add(track: track, nonce: "n\(n)", itemId: Self.item(n)), by: host, at: 1_000 + Int64(n))
        }
        _ = try state.apply(.vote(itemId: Self.item(3), value: 1), by: guest, at: 2_000)
        _ = try state.apply(.vote(itemId: Self.item(3), value: 0), by: guest, at: 3_000)
        return state
    }

    static func item(_ n: Int) -> ItemID { JamID("00000000-0000-0000-0001-00000000000\(n)") }

    static func flags(_ state: SessionState) -> [String: Bool] {
        Dictionary(uniqueKeysWithValues: state.queue.map { ($0.id.rawValue, QueueITViews.song($0, status: "queued", in: state).enteredTierByGain) })
    }

    @Test func underTiersASongThatLostAVoteIsReportedAsFallenAndPlaysFirst() throws {
        let state = try Self.fallen(under: .fallenFirst)
        #expect(Self.flags(state) == [Self.item(2).rawValue: true, Self.item(3).rawValue: false])
        #expect(state.queueHead()?.id == Self.item(3))
    }

    @Test func aSessionStoredBeforeTiersReportsEverySongAsRisenAsItsOrderDoes() throws {
        let state = try Self.fallen(under: .heldLongest)
        #expect(Self.flags(state) == [Self.item(2).rawValue: true, Self.item(3).rawValue: true])
        #expect(state.queueHead()?.id == Self.item(2))
    }
}
