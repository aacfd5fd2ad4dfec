import Foundation
import JamProtocol
import JamTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import JamServer

/// A node's leases are PostgreSQL advisory locks on its lease connection; the node must know
/// of every one it holds, or a session would stay locked by a node that does not serve it.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct LeaseCancellationTests {
    @Test func aLeaseQueryWhoseCallerIsCancelledLeavesNoLockTheNodeDoesNotKnowOf() async throws {
        try await withRunningNode { node, other, logger in
            func advisoryLocks() async throws -> Int {
                let rows = try await other.query(
                    """
                    SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                    WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()
                    """, logger: logger)
                var count = 0
                for try await n in rows.decode(Int64.self) { count = Int(n) }
                return count
            }
            // Few enough to leave room in the lock table for the suites running beside this one.
            let ids = (1...300).map { SessionID(String(format: "00000000-0000-0000-0009-%012d", $0)) }
            // Cancelled before it starts: its statement still goes, and still takes the locks.
            let attempt = Task { await node.tryLock(ids) }
            attempt.cancel()
            let answered = await attempt.value
            let held = node.held.withLock { $0.count }
            #expect(held == answered.count)
            let locks = try await advisoryLocks()
            #expect(locks == held, "every lock the database holds for the node is one the node knows of")
        }
    }

    @Test func leasesAskedForSeveralTimesAtOnceAreTakenOnceAndOneReleaseFreesEach() async throws {
        try await withRunningNode { node, other, logger in
            /// How many of `ids` another node could take now; it gives them back at once.
            func takenByAnother(_ ids: [SessionID]) async throws -> Int {
                let rows = try await other.query(
                    "SELECT count(*) FROM unnest(\(ids.map(\.rawValue))) AS t(id) WHERE pg_try_advisory_lock(hashtextextended(id, 0))",
                    logger: logger)
                var count = 0
                for try await n in rows.decode(Int64.self) { count = Int(n) }
                _ = try await other.query("SELECT pg_advisory_unlock_all()", logger: logger)
                return count
            }
            let ids = (1...50).map { SessionID(String(format: "00000000-0000-0000-0010-%012d", $0)) }
            // A lease poll and sessions being read can ask for the same leases at once.
            let answers = await withTaskGroup(of: Set<SessionID>.self) { asking in
                for _ in 0..<4 { asking.addTask { await node.tryLock(ids) } }
                return await asking.reduce(into: [Set<SessionID>]()) { $0.append($1) }
            }
            #expect(answers.count == 4 && answers.allSatisfy { $0 == Set(ids) }, "every caller hears the node holds them all")
            #expect(try await takenByAnother(ids) == 0)
            for id in ids { node.release(id) }
            // Taken twice, a lease would still be held after its one release.
            try await eventually("another node can take every lease given up", timeout: .seconds(5)) {
                try await takenByAnother(ids) == ids.count
            }
        }
    }

    @Test func aStatementForALeaseConnectionThatHasClosedFailsAtOnce() async throws {
        try await withNode { location, node, logger in
            let connection = try await PostgresConnection.connect(configuration: try location.testConnectionConfiguration(), id: 6, logger: logger)
            try await connection.close()
            // Unstructured, so that a statement PostgresNIO never answers fails the test rather
            // than hang it: nothing ends that wait, a time limit included.
            let outcome = Mutex<String?>(nil)
            let attempt = Task {
                do {
                    try await node.onLease(connection) { connection in
                        try await connection.send("SELECT 1", logger: logger)
                    }
                    outcome.withLock { $0 = "answered" }
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                }
            }
            let ended = try await eventually("the statement fails", timeout: .seconds(5)) { outcome.withLock { $0 } }
            #expect(ended == "\(ConnectionClosed())")
            await attempt.value
        }
    }

    /// Runs `body` with a node that runs and holds its lease connection, and a connection of
    /// the test's own to the same database (another node, in effect).
    private func withRunningNode(_ body: (ClusterNode, PostgresConnection, Logger) async throws -> Void) async throws {
        try await withNode { location, node, logger in
            try await location.withTestConnection { other in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await node.run() }
                    try await eventually("the node has its lease connection", timeout: .seconds(20), until: { node.isConnected })
                    try await body(node, other, logger)
                    group.cancelAll()
                }
            }
        }
    }

    /// Runs `body` with a node on a store of a fresh database, and closes the store however
    /// `body` ends.
    private func withNode(_ body: (PostgresLocation, ClusterNode, Logger) async throws -> Void) async throws {
        let location = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "test")
        let store = try await PostgresSessionStore.open(location, logger: logger)
        do {
            try await body(location, ClusterNode(store: store, logger: logger), logger)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}
