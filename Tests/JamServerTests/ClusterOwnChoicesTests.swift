import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// A member's own choices reach their devices on every node: a node that follows the
/// session's log frames them for its own sockets.
@Suite(.serialized, .enabled(if: TestCluster.enabled, "needs PostgreSQL and HAProxy (scripts/test.sh starts them)"))
struct ClusterOwnChoicesTests {
    @Test func aVoteOnTheOwnersNodeShowsOnTheMembersDeviceOnAnotherNode() async throws {
        try await TestCluster.with(nodes: 2) { cluster in
            let (owner, other) = (cluster.node(0), cluster.node(1))
            let (host, guest, id, queued) = try await Self.songQueued(in: cluster)
            // Two members connected: one skip request does not skip.
            let hostSocket = TestSocket(server: owner, session: id, token: host.token)
            try await hostSocket.next(.stateSync)
            let phone = TestSocket(server: owner, session: id, token: guest.token)
            try await phone.next(.stateSync)
            let laptop = TestSocket(server: other, session: id, token: guest.token)
            try await laptop.next(.stateSync)
            let epoch = try #require(try await owner.api.view(guest.token, id).nowPlaying?.epoch)

            phone.send(.vote(Vote(itemId: queued, value: 1)), id: "v1")
            let voted = try await laptop.next(.myChoices)
            #expect(voted.myChoices == MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: false))

            // And back: the laptop's request, forwarded to the owner, reaches the phone there.
            laptop.send(.requestSkip(Skip(epoch: epoch)), id: "s1")
            let asked = try await phone.next(.myChoices)
            #expect(asked.myChoices == MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: true))
            try await laptop.next("ack s1") { $0.ack?.id == "s1" }
            // The node that follows the log cannot tell its sender: the laptop hears of it too.
            #expect(await laptop.received.contains { $0.myChoices?.mySkipRequest == true })
            await phone.close()
            await laptop.close()
            await hostSocket.close()
        }
    }

    @Test func aVoteSentAgainThroughANodeWithoutItsAnswerIsFollowedByTheChoicesAsTheyAreNow() async throws {
        try await TestCluster.with(nodes: 2) { cluster in
            let (owner, other) = (cluster.node(0), cluster.node(1))
            let (_, guest, id, queued) = try await Self.songQueued(in: cluster)
            let phone = TestSocket(server: owner, session: id, token: guest.token)
            try await phone.next(.stateSync)
            let laptop = TestSocket(server: other, session: id, token: guest.token)
            try await laptop.next(.stateSync)

            // The phone votes, then votes the same again: the second changes nothing, so no
            // record carries its answer, and only the owner keeps it.
            phone.send(.vote(Vote(itemId: queued, value: 1)), id: "v1")
            try await phone.next("ack v1") { $0.ack?.id == "v1" }
            phone.send(.vote(Vote(itemId: queued, value: 1)), id: "v2")
            try await phone.next("ack v2") { $0.ack?.id == "v2" }
            // Gil takes the vote back on the laptop.
            laptop.send(.vote(Vote(itemId: queued, value: 0)), id: "v3")
            try await phone.next("the laptop's withdrawal") { $0.myChoices?.myVotes.isEmpty == true }
            // The other node follows the log on its own time: wait until it has the withdrawal,
            // or its relay could reach the returning socket after its stateSync.
            try await laptop.next("the withdrawal on its own node") {
                $0.votesUpdate?.itemId == queued && $0.votesUpdate?.score == 0
            }
            await phone.close()

            // The phone comes back through the other node and sends v2 again: that node asks
            // the owner, which answers from memory; the choices as they are now follow.
            let back = TestSocket(server: other, session: id, token: guest.token)
            try await back.next(.stateSync)
            let count = await back.received.count
            back.send(.vote(Vote(itemId: queued, value: 1)), id: "v2")
            try await back.next("ack v2") { $0.ack?.id == "v2" }
            let now = MyChoices(myVotes: [:], mySkipRequest: false)
            try await back.next("the choices after it") { $0.myChoices == now }
            let answers = await back.received.dropFirst(count).filter { $0.ack != nil || $0.myChoices != nil }
            #expect(answers.map { $0.ack?.id ?? "choices" } == ["v2", "choices"])
            #expect(await back.received.dropFirst(count).allSatisfy { $0.votesUpdate == nil }, "applied once")
            await back.close()
            await laptop.close()
        }
    }

    /// The first node's session, its guest joined on the second: song 1 playing, song 2 queued.
    private static func songQueued(in cluster: TestCluster) async throws
        -> (host: GuestAuthResponse, guest: GuestAuthResponse, id: SessionID, queued: ItemID)
    {
        let (host, guest, id) = try await ClusterTests.sessionOfTheFirstNode(joinedOnTheSecond: cluster)
        _ = try await cluster.node(0).api.add(host.token, id, testTrack(1))
        let queued = try await cluster.node(0).api.add(host.token, id, testTrack(2)).decode(QueueItem.self).id
        return (host, guest, id, queued)
    }
}
