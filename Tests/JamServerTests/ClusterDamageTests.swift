import Foundation
import JamProtocol
import JamTestSupport
import Logging
import PostgresNIO
import Testing

@testable import JamServer

/// A node sharing PostgreSQL that finds a session's stored data damaged says so, as a single
/// server does, rather than calling the database unreachable.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ClusterDamageTests {
    @Test func aNodeBringingBackADamagedSessionReportsTheDamageAndRemembersIt() async throws {
        let location = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "test")
        let first = try await PostgresSessionStore.open(location, logger: logger)
        let (id, token) = try await TestServer.with(store: first) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let socket = TestSocket(server: server, session: id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n1")), id: "add-1")
            _ = try await socket.next("the ack") { $0.ack?.id == "add-1" }
            await socket.close()
            return (id, host.token)
        }
        // The server stopped with a snapshot holding the add's answer; that snapshot is cut.
        try await location.withTestConnection { try await Self.cutAnswers(of: id, on: $0) }

        let second = try await PostgresSessionStore.open(location, logger: logger)
        try await TestServer.with(store: second) { server in
            // Until its lease connection is up, a node refuses with 503 without reading anything.
            try await eventually("the node is connected to the database", timeout: .seconds(10)) {
                try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: token).status != 503
            }
            for attempt in 1...2 {
                let view = try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: token)
                #expect(view.status == 500, "attempt \(attempt): \(view.text)")
                #expect(view.errorCode == .internal, "attempt \(attempt)")
                #expect(view.text.contains("the session's stored data is damaged: the snapshot of session \(id.rawValue) at record"), "attempt \(attempt): \(view.text)")
                #expect(view.text.contains("has answers that cannot be read"), "attempt \(attempt): \(view.text)")
            }
        }
    }

    @Test func aDamagedSessionWokenAtItsDeadlineLeavesItsLeaseFree() async throws {
        let location = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "test")
        let first = try await PostgresSessionStore.open(location, logger: logger)
        // A session with a deadline a few seconds on: the end of its track.
        let (id, stoppedAt) = try await TestServer.with(store: first) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            #expect(try await server.api.add(host.token, id, testTrack(1, durationMs: 4_000)).status == 201)
            return (id, ContinuousClock.now)
        }
        try await location.withTestConnection { connection in
            try await Self.cutAnswers(of: id, on: connection)
            let second = try await PostgresSessionStore.open(location, logger: logger)
            try await TestServer.with(store: second) { _ in
                // The node wakes the session at its deadline, takes its lease, and cannot read it.
                try await Task.sleep(until: stoppedAt + .seconds(6))
                let rows = try await connection.query("SELECT pg_try_advisory_lock(hashtextextended(\(id.rawValue), 0))", logger: logger)
                var free = false
                for try await taken in rows.decode(Bool.self) { free = taken }
                #expect(free, "the node that could not bring the session back gave its lease up")
            }
        }
    }

    /// Cuts the stored answers of `id`'s snapshots short, so they no longer read.
    private static func cutAnswers(of id: SessionID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE session_snapshots SET answers = '\\x7b22'::bytea WHERE session_id = \(id.rawValue)", logger: Logger(label: "test"))
    }
}
