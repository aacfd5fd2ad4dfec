import Foundation
import JamProtocol
import JamTestSupport
import struct JamServer.PostgresLocation
import Logging
import PostgresNIO
import Testing

/// A member's commands keep their order, and their ids their first command, when the node
/// their socket is on takes the session over while one of them is still on its way to the
/// old owner's inbox.
@Suite(.serialized, .enabled(if: TestCluster.enabled, "needs PostgreSQL and HAProxy (scripts/test.sh starts them)"))
struct TakeoverOrderTests {
    @Test(.timeLimit(.minutes(2))) func aSocketsNextCommandWaitsForItsForwardedOneWhenItsNodeTakesTheSessionOver() async throws {
        try await Self.whileTakingOver(socketOf: \.guest) { socket, item, _, _ in
            // The member takes the vote back. Applied at once, it would come first, and the
            // vote that reaches the inbox afterwards would stand.
            socket.send(.vote(Vote(itemId: item, value: 0)), id: "v2")
            try await Task.sleep(for: .seconds(1)) // a window for a wrong ack to show in
            #expect(await socket.received.allSatisfy { $0.ack?.id != "v2" }, "the later command was applied before the earlier one")
        } then: { socket, item, other, member in
            try await socket.next("ack v2", timeout: .seconds(15)) { $0.ack?.id == "v2" }
            let acks = await socket.received.compactMap { $0.ack?.id }
            #expect(acks.firstIndex(of: "v1")! < acks.firstIndex(of: "v2")!)
            #expect(try await other.api.view(member.token, member.session).myVotes[item.rawValue] ?? 0 == 0, "the vote taken back stands")
        }
    }

    @Test(.timeLimit(.minutes(2))) func aDeviceSyncRequestUnderTheIdOfACommandHeldDuringATakeoverIsRefused() async throws {
        try await Self.whileTakingOver(socketOf: \.host) { socket, _, _, member in
            // The add waits for the takeover. Performed meanwhile, the re-sync would answer for
            // its id, and the add, applied later, be refused for the id it was sent with first.
            socket.send(.addToQueue(AddToQueue(track: testTrack(3), nonce: "n3")), id: "a1")
            socket.send(.resync(Resync(userId: member.userId)), id: "a1")
            let refused = try await socket.next("the re-sync's answer", where: ClusterTests.answer("a1"))
            #expect(refused.error?.code == .keyReused, "\(refused.event)")
        } then: { socket, _, other, member in
            let added = try await socket.next("the add's answer", timeout: .seconds(15), where: ClusterTests.answer("a1"))
            #expect(added.ack?.itemId != nil, "\(added.event)")
            #expect(try await other.api.view(member.token, member.session).queue.map(\.track.id) == ["track-2", "track-3"])
        }
    }

    /// Who `whileTakingOver`'s socket belongs to.
    struct Member {
        let token: String
        let userId: UserID
        let session: SessionID
    }

    /// Two nodes, a session the first owns with two songs and a guest who joined on the
    /// second, and the socket of `member` (the host or that guest) on the second. The test
    /// keeps the session's inbox from being written, the member votes for the queued song
    /// (`v1`, forwarded to the owner, so it waits on its way there), and the first node dies:
    /// the second takes the session over, and `during` runs while it waits for that vote. Once
    /// the inbox is written again, `then` runs after the vote's ack.
    static func whileTakingOver(
        socketOf member: KeyPath<(host: GuestAuthResponse, guest: GuestAuthResponse), GuestAuthResponse>,
        during: (_ socket: TestSocket, _ item: ItemID, _ node: TestServer, _ member: Member) async throws -> Void,
        then: (_ socket: TestSocket, _ item: ItemID, _ node: TestServer, _ member: Member) async throws -> Void
    ) async throws {
        // `notice` shows the takeover in the node's log.
        try await TestCluster.with(nodes: 2, arguments: ["--log-level", "notice"]) { cluster in
            let other = cluster.node(1)
            let (host, guest, id) = try await ClusterTests.sessionOfTheFirstNode(joinedOnTheSecond: cluster)
            let chosen = (host: host, guest: guest)[keyPath: member]
            let member = Member(token: chosen.token, userId: chosen.userId, session: id)
            for n in 1...2 { #expect(try await cluster.node(0).api.add(host.token, id, testTrack(n, durationMs: 3_600_000)).status == 201) }
            // The other node shows what it has read of the session's log, which may lag the owner.
            let item = try await eventually("the other node shows the queued item") { try await other.api.view(member.token, id).queue.first?.id }
            let socket = TestSocket(server: other, session: id, token: member.token)
            try await socket.next(.stateSync)
            let logger = Logger(label: "test")
            let database = try PostgresLocation(url: cluster.database)
            try await database.withTestConnection(id: 2) { probe in
                try await database.withTestConnection(id: 1) { blocker in
                    try await blocker.query("BEGIN", logger: logger)
                    try await blocker.query("LOCK TABLE session_inbox IN SHARE MODE", logger: logger)
                    socket.send(.vote(Vote(itemId: item, value: 1)), id: "v1")
                    try await eventually("the vote's forward waits for the inbox") {
                        try await !probe.backends(running: "INSERT INTO session_inbox", waitingFor: "relation").isEmpty
                    }
                    try await cluster.nodes[0].kill()
                    try await eventually("the member's node took the session over", timeout: .seconds(15), every: .milliseconds(50)) {
                        try String(contentsOf: cluster.nodes[1].logFile, encoding: .utf8).contains("took the session over")
                    }
                    try await during(socket, item, other, member)
                    try await blocker.query("COMMIT", logger: logger)
                }
            }
            try await socket.next("ack v1", timeout: .seconds(15)) { $0.ack?.id == "v1" }
            try await then(socket, item, other, member)
            await socket.close()
        }
    }
}
