import Foundation
import JamProtocol
import JamTestSupport
import Logging
import PostgresNIO
import Testing

/// A graceful stop has an end, also while a request waits on a store that does not answer.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct StopTimeoutTests {
    @Test func aStopWhileACreateWaitsOnAStuckStoreEndsWithinTheTimeout() async throws {
        let location = try await TestPostgres.freshDatabase()
        let node = try await ServerProcess(
            dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url, "--stop-timeout-seconds", "2"])
        let api = node.server.api
        let host = try await api.guest("Host")
        _ = try await api.create(host.token)
        try await location.withTestConnection { sql in
            let logger = Logger(label: "test")
            // Reads go on; a new session's snapshot waits for the lock, and so does its create.
            try await sql.query("BEGIN", logger: logger)
            try await sql.query("LOCK TABLE session_snapshots IN EXCLUSIVE MODE", logger: logger)
            let create = Task { try? await api.send("POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest()) }
            // The create's write waits on the lock: the stop below has something to wait for.
            try await eventually("the create waits for the table", timeout: .seconds(10)) {
                let rows = try await sql.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", logger: logger)
                var waiting = 0
                for try await n in rows.decode(Int64.self) { waiting = Int(n) }
                return waiting >= 1
            }
            let asked = ContinuousClock.now
            node.child.signal(SIGTERM)
            _ = try await node.child.waitForExit(timeout: .seconds(40))
            // Two seconds of graceful stop, one of cancellation, and the time a loaded machine
            // takes to end a process (21 s seen with every suite running on two slow cores);
            // without the limit it would still run at 40 s.
            #expect(ContinuousClock.now - asked < .seconds(30))
            // Cut off by the stop, it was never answered as created.
            #expect(await create.value?.status != 201)
            create.cancel()
            try await sql.query("ROLLBACK", logger: logger)
        }
    }
}
