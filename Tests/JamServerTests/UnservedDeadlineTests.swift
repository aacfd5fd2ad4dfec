import Foundation
import JamProtocol
import JamTestSupport
import Logging
import Testing

@testable import JamServer

/// A session whose node dies with nobody connected still ends (and is purged) on time: another
/// node finds its deadline in the database and brings it back.
@Suite(.serialized, .enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct UnservedDeadlineTests {
    static let hour: Int64 = 3_600_000

    /// What each test has: a node in this process on a clock the test moves, reading the
    /// database for deadlines every 200 ms; a `jam serve` process as the sessions' owner,
    /// started after that node read the index (so it has no wake-up for their sessions); and
    /// the database itself, to look at.
    struct Nodes {
        let node: TestServer
        let owner: ServerProcess
        let clock: ShiftedClock
        let database: PostgresSessionStore
    }

    /// Runs `body` with a fresh database; `configure` adds to the in-process node's settings,
    /// `ownerArguments` to the owner's command line.
    func withNodes(
        configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in }, ownerArguments: [String] = [],
        _ body: @escaping @Sendable (Nodes) async throws -> Void
    ) async throws {
        let location = try await TestPostgres.freshDatabase()
        let clock = ShiftedClock()
        let database = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(clock: clock, configure: {
            $0.database = location
            $0.deadlineScanMs = 200
            configure(&$0)
        }) { node in
            let owner = try await ServerProcess(
                dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url] + ownerArguments)
            try await body(Nodes(node: node, owner: owner, clock: clock, database: database))
        }
        try await database.close()
    }

    @Test func aSessionWhoseNodeWasKilledWithNobodyConnectedEndsOnAnotherNodeAtItsDeadline() async throws {
        try await withNodes(configure: { $0.timing.abandonAfterMs = Self.hour }, ownerArguments: ["--end-abandoned-hours", "1"]) { nodes in
            let host = try await nodes.owner.server.api.guest("Host")
            let id = try await nodes.owner.server.api.create(host.token).session.id
            try await nodes.owner.kill()
            #expect(try await nodes.database.entry(id)?.ended == false)
            nodes.clock.advance(byMs: Double(2 * Self.hour))
            try await eventually("the session nobody serves ended on the other node", timeout: .seconds(15)) {
                try await nodes.database.entry(id)?.ended == true
            }
        }
    }

    @Test func aSessionThisNodeFollowedAndLetGoEndsHereOnceItsOwnerIsKilled() async throws {
        try await withNodes(
            configure: {
                $0.timing.abandonAfterMs = Self.hour
                $0.idleReplicaMs = 100
            }, ownerArguments: ["--end-abandoned-hours", "1"]
        ) { nodes in
            let host = try await nodes.owner.server.api.guest("Host")
            let created = try await nodes.owner.server.api.create(host.token)
            let id = created.session.id
            // A guest listens through this node, which follows the session until a while after
            // the guest's socket closes, and keeps its entry after letting it go.
            let guest = try await nodes.node.api.guest("Guest")
            _ = try await nodes.node.api.join(guest.token, code: created.session.joinCode)
            let socket = TestSocket(server: nodes.node, session: id, token: guest.token)
            try await socket.next(.stateSync)
            _ = await socket.close()
            try await Task.sleep(for: .milliseconds(500))
            try await nodes.owner.kill()
            nodes.clock.advance(byMs: Double(2 * Self.hour))
            try await eventually("the session this node had let go ended here", timeout: .seconds(15)) {
                try await nodes.database.entry(id)?.ended == true
            }
        }
    }

    @Test func anEndedSessionWhoseNodeWasKilledIsPurgedByAnotherNodeWhenItsRetentionIsOver() async throws {
        try await withNodes { nodes in
            let host = try await nodes.owner.server.api.guest("Host")
            let id = try await nodes.owner.server.api.create(host.token).session.id
            let ended = try await nodes.owner.server.api.request("DELETE", "/api/v1/sessions/\(id.rawValue)", token: host.token)
            #expect(ended.status == 204)
            try await nodes.owner.kill()
            #expect(try await nodes.database.entry(id)?.ended == true)
            // The default retention is a week.
            nodes.clock.advance(byMs: Double(8 * 24 * Self.hour))
            try await eventually("the ended session's rows were purged by the other node", timeout: .seconds(15)) {
                try await nodes.database.entry(id) == nil
            }
        }
    }
}
