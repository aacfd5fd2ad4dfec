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

    @Test func aSessionWhoseNodeWasKilledWithNobodyConnectedEndsOnAnotherNodeAtItsDeadline() async throws {
        let location = try await TestPostgres.freshDatabase()
        let clock = ShiftedClock()
        let database = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(clock: clock, configure: {
            $0.database = location
            $0.timing.abandonAfterMs = Self.hour
            $0.deadlineScanMs = 200
        }) { _ in
            // Made after the other node read the index, so that node has no wake-up for it.
            let owner = try await ServerProcess(
                dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url, "--end-abandoned-hours", "1"])
            let host = try await owner.server.api.guest("Host")
            let id = try await owner.server.api.create(host.token).session.id
            try await owner.kill()
            #expect(try await database.entry(id)?.ended == false)
            clock.advance(byMs: Double(2 * Self.hour))
            try await eventually("the session nobody serves ended on the other node", timeout: .seconds(15)) {
                try await database.entry(id)?.ended == true
            }
        }
        try await database.close()
    }

    @Test func aSessionThisNodeFollowedAndLetGoEndsHereOnceItsOwnerIsKilled() async throws {
        let location = try await TestPostgres.freshDatabase()
        let clock = ShiftedClock()
        let database = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(clock: clock, configure: {
            $0.database = location
            $0.timing.abandonAfterMs = Self.hour
            $0.deadlineScanMs = 200
            $0.idleReplicaMs = 100
        }) { follower in
            let owner = try await ServerProcess(
                dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url, "--end-abandoned-hours", "1"])
            let host = try await owner.server.api.guest("Host")
            let created = try await owner.server.api.create(host.token)
            let id = created.session.id
            // A guest listens through this node, which follows the session until a while after
            // the guest's socket closes, and keeps its entry after letting it go.
            let guest = try await follower.api.guest("Guest")
            _ = try await follower.api.join(guest.token, code: created.session.joinCode)
            let socket = TestSocket(server: follower, session: id, token: guest.token)
            try await socket.next(.stateSync)
            _ = await socket.close()
            try await Task.sleep(for: .milliseconds(500))
            try await owner.kill()
            clock.advance(byMs: Double(2 * Self.hour))
            try await eventually("the session this node had let go ended here", timeout: .seconds(15)) {
                try await database.entry(id)?.ended == true
            }
        }
        try await database.close()
    }

    @Test func anEndedSessionWhoseNodeWasKilledIsPurgedByAnotherNodeWhenItsRetentionIsOver() async throws {
        let location = try await TestPostgres.freshDatabase()
        let clock = ShiftedClock()
        let database = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(clock: clock, configure: {
            $0.database = location
            $0.deadlineScanMs = 200
        }) { _ in
            let owner = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url])
            let host = try await owner.server.api.guest("Host")
            let id = try await owner.server.api.create(host.token).session.id
            let ended = try await owner.server.api.request("DELETE", "/api/v1/sessions/\(id.rawValue)", token: host.token)
            #expect(ended.status == 204)
            try await owner.kill()
            #expect(try await database.entry(id)?.ended == true)
            // The default retention is a week.
            clock.advance(byMs: Double(8 * 24 * Self.hour))
            try await eventually("the ended session's rows were purged by the other node", timeout: .seconds(15)) {
                try await database.entry(id) == nil
            }
        }
        try await database.close()
    }
}
