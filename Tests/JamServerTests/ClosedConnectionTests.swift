import Foundation
import JamTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import JamServer

/// PostgresNIO never answers a statement written after its connection closed; OpenJam's
/// statements fail at once instead, so nothing waits for ever on a connection that broke.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ClosedConnectionTests {
    @Test func aStatementForAClosedConnectionFailsWithoutBeingSent() async throws {
        let outcome = try await outcomeOnAClosedConnection { connection, logger in
            try await connection.send("SELECT 1", logger: logger)
        }
        #expect(outcome == "\(ConnectionClosed())")
    }

    @Test func aTransactionWhoseConnectionClosesInItsBodyFailsWithTheBodysError() async throws {
        struct BodyFailed: Error {}
        let outcome = try await outcomeOnAClosedConnection(closedFirst: false) { connection, logger in
            try await connection.transaction(logger: logger) { connection in
                try await connection.send("SELECT 1", logger: logger)
                // The database goes away mid-transaction: the body fails, and there is nothing to
                // roll back on this connection any more.
                try await connection.close()
                throw BodyFailed()
            }
        }
        #expect(outcome == "\(BodyFailed())")
    }

    /// What `body` ended with on a fresh connection (closed before it when `closedFirst`):
    /// "answered" or its error. Run unstructured, so that a statement PostgresNIO never answers
    /// fails the test after 5 s rather than hang it.
    private func outcomeOnAClosedConnection(
        closedFirst: Bool = true, _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> Void
    ) async throws -> String {
        let location = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "test")
        let connection = try await PostgresConnection.connect(configuration: try location.testConnectionConfiguration(), id: 7, logger: logger)
        if closedFirst { try await connection.close() }
        let outcome = Mutex<String?>(nil)
        let attempt = Task {
            do {
                try await body(connection, logger)
                outcome.withLock { $0 = "answered" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        let ended = try await eventually("the statement is answered or fails", timeout: .seconds(5)) { outcome.withLock { $0 } }
        await attempt.value
        return ended
    }
}
