import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Testing

/// The Swift SDK, unchanged, through HAProxy in front of three nodes: it follows the session
/// wherever its socket lands, and carries on through another node when its node dies.
@Suite(.serialized, .enabled(if: TestCluster.enabled, "needs PostgreSQL and HAProxy (scripts/test.sh starts them)"))
struct ClusterSDKTests {
    /// The node whose `openjam_realtime_connections` says it holds a socket.
    static func nodeHoldingASocket(_ cluster: TestCluster) async throws -> Int? {
        for (n, node) in cluster.nodes.enumerated() where node.child.isRunning {
            let metrics = try await node.server.api.request("GET", "/metrics").text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("openjam_realtime_connections ") }
            if let value = line?.split(separator: " ").last.flatMap({ Double($0) }), value > 0 { return n }
        }
        return nil
    }

    @Test func theSDKCarriesOnThroughTheBalancerWhenItsNodeDies() async throws {
        try await TestCluster.with { cluster in
            let host = try await cluster.front.api.guest("Host")
            let created = try await cluster.node(0).api.create(host.token)
            var api = JamAPI(server: URL(string: cluster.front.baseURL)!)
            let identity = try await api.signIn(displayName: "Gil")
            let view = try await api.join(code: created.session.joinCode)
            let client = SessionClient(
                api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(),
                backoff: Backoff(baseMs: 20, capMs: 200), seed: 7)
            let store = SessionStore(client: client)

            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.run() }
                group.addTask { await store.run() }
                _ = try await store.until("connected") { $0.members.contains { $0.displayName == "Gil" && $0.connected } }
                #expect(try await cluster.node(1).api.add(host.token, created.session.id, testTrack(1)).status == 201)
                _ = try await store.until("the host's song") { $0.nowPlaying?.item.track.id == "track-1" }
                let mine = try #require(await store.add(Track(id: "gil-1", name: "Gil's", artist: "G", durationMs: 200_000, source: .external)))
                _ = try await store.until("its own song acknowledged") { $0.queue.contains { $0.id == mine && !$0.pending } }

                let dying = try #require(try await Self.nodeHoldingASocket(cluster), "the SDK's socket is on no node")
                try await cluster.nodes[dying].kill()
                let survivor = cluster.nodes.indices.first { $0 != dying }!
                #expect(try await cluster.node(survivor).api.add(host.token, created.session.id, testTrack(2)).status == 201)
                _ = try await store.until("a song added after its node died") { $0.queue.contains { $0.item.track.id == "track-2" } }
                await store.vote(mine, 1)
                let voted = try await store.until("its vote after the move") { $0.queue.first { $0.id == mine }.map { $0.item.score == 1 && !$0.voteInFlight } ?? false }
                #expect(voted.lastRejection == nil)
                #expect(voted.queue.filter { $0.item.track.id == "gil-1" }.count == 1, "nothing applied twice")
                group.cancelAll()
            }
        }
    }
}
