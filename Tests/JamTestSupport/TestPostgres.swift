import Foundation
import JamServer
import Logging
import PostgresNIO

/// The throwaway PostgreSQL cluster `scripts/test.sh` starts (`JAM_TEST_DATABASE_URL`), and a
/// fresh database in it for each test that asks, so tests running side by side never share rows.
public enum TestPostgres {
    /// The cluster's URL; nil when the run has none.
    public static var url: String? {
        ProcessInfo.processInfo.environment["JAM_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether PostgreSQL tests run: with a cluster, or when every suite is required (they then fail).
    public static var enabled: Bool { url != nil || ProcessInfo.processInfo.environment["JAM_REQUIRE_ALL"] == "1" }

    /// Creates an empty database in the test cluster and returns where it is.
    public static func freshDatabase() async throws -> PostgresLocation {
        guard let url else {
            throw TestFailure("PostgreSQL tests need JAM_TEST_DATABASE_URL (scripts/test.sh starts a cluster; JAM_REQUIRE_ALL=1 makes it required)")
        }
        let base = try PostgresLocation(url: url)
        let name = "jam_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let connection = try await PostgresConnection.connect(
            configuration: try base.testConnectionConfiguration(), id: 1, logger: Logger(label: "test-postgres"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test-postgres"))
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return try base.replacingDatabase(with: name)
    }
}

extension PostgresLocation {
    /// Runs `body` on a connection of the test's own, closed however `body` ends: PostgresNIO
    /// stops a program that drops a connection still open.
    public func withTestConnection(id: Int = 1, _ body: (PostgresConnection) async throws -> Void) async throws {
        let connection = try await PostgresConnection.connect(configuration: try testConnectionConfiguration(), id: id, logger: Logger(label: "test"))
        do {
            try await body(connection)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
