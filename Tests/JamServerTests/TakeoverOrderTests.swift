import Foundation
import JamProtocol
import JamTestSupport
import struct JamServer.PostgresLocation
import Logging
import PostgresNIO
import Testing

/// A member's commands keep their order when the node their socket is on takes the session
/// over while one of them is still on its way to the old owner's inbox.
@Suite(.serialized, .enabled(if: TestCluster.enabled, "needs PostgreSQL and HAProxy (scripts/test.sh starts them)"))
struct TakeoverOrderTests {
    @Test(.timeLimit(.minutes(2))) func aSocketsNextCommandWaitsForItsForwardedOneWhenItsNodeTakesTheSessionOver() async throws {
        // `notice` shows the takeover in the node's log.
        try await TestCluster.with(nodes: 2, arguments: ["--log-level", "notice"]) { cluster in
            let other = cluster.node(1)
            let (host, guest, id) = try await ClusterTests.sessionOfTheFirstNode(joinedOnTheSecond: cluster)
            for n in 1...2 { #expect(try await cluster.node(0).api.add(host.token, id, testTrack(n, durationMs: 3_600_000)).status == 201) }
            // The other node shows what it has read of the session's log, which may lag the owner.
            let item = try await eventually("the other node shows the queued item") { try await other.api.view(guest.token, id).queue.first?.id }
            let socket = TestSocket(server: other, session: id, token: guest.token)
            try await socket.next(.stateSync)
            let logger = Logger(label: "test")
            let database = try PostgresLocation(url: cluster.database)
            try await database.withTestConnection(id: 2) { probe in
                try await database.withTestConnection(id: 1) { blocker in
                    // The test keeps the inbox from being written: the member's vote, forwarded to
                    // the owner, waits on its way there while its node takes the session over.
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
                    // The member takes the vote back. Applied at once, it would come first, and the
                    // vote that reaches the inbox afterwards would stand.
                    socket.send(.vote(Vote(itemId: item, value: 0)), id: "v2")
                    try await Task.sleep(for: .seconds(1)) // a window for a wrong ack to show in
                    #expect(await socket.received.allSatisfy { $0.ack?.id != "v2" }, "the later command was applied before the earlier one")
                    try await blocker.query("COMMIT", logger: logger)
                }
            }
            try await socket.next("ack v1", timeout: .seconds(15)) { $0.ack?.id == "v1" }
            try await socket.next("ack v2", timeout: .seconds(15)) { $0.ack?.id == "v2" }
            let acks = await socket.received.compactMap { $0.ack?.id }
            #expect(acks.firstIndex(of: "v1")! < acks.firstIndex(of: "v2")!)
            #expect(try await other.api.view(guest.token, id).myVotes[item.rawValue] ?? 0 == 0, "the vote taken back stands")
            await socket.close()
        }
    }
}
