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
            // Few enough to leave room in the lock table for the suites running beside this one.
            let ids = sessionIDs(series: 9, count: 300)
            // Cancelled before it starts: its statement still goes, and still takes the locks.
            let attempt = Task { await node.tryLock(ids) }
            attempt.cancel()
            let answered = await attempt.value
            let held = node.held.withLock { $0.count }
            // The statement ran to its end all the same: every lease was free, and is the node's.
            #expect(answered == Set(ids))
            #expect(held == ids.count)
            let locks = try await advisoryLocks(seenBy: other, logger: logger)
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
            let ids = sessionIDs(series: 10, count: 50)
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
                    _ = try await node.onLease(connection) { connection in
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

    @Test func aLeaseStatementTheDatabaseFailsPartWayGivesBackWhatItTookAndKeepsTheOtherLeases() async throws {
        try await withRunningNode { node, other, logger in
            let kept = sessionIDs(series: 11, count: 10)
            #expect(await node.tryLock(kept) == Set(kept))
            // Rows 1–149 take their locks, row 150 fails the statement, as a full lock table would.
            try await failLeaseKeys(from: 150, once: true, on: other, logger: logger)
            let ids = sessionIDs(series: 12, count: 300)
            let connection = node.lease.withLock { $0 }
            #expect(await node.tryLock(ids) == [])
            #expect(node.held.withLock { $0 } == Set(kept))
            #expect(
                try await advisoryLocks(seenBy: other, logger: logger) == kept.count,
                "the 149 locks the failed statement took are given back, the node's own stay")
            #expect(node.lease.withLock { $0 } === connection, "the node keeps its connection, and with it its sessions")
            // Asked for again, each is taken once: one release frees it.
            #expect(await node.tryLock(ids) == Set(ids))
            #expect(try await advisoryLocks(seenBy: other, logger: logger) == kept.count + ids.count)
            for id in ids { node.release(id) }
            try await eventually("the released leases are free", timeout: .seconds(5)) {
                try await advisoryLocks(seenBy: other, logger: logger) == kept.count
            }
        }
    }

    @Test func leasesAFailedStatementTookThatCannotBeGivenBackGoWithTheConnection() async throws {
        try await withRunningNode { node, other, logger in
            let kept = sessionIDs(series: 13, count: 10)
            #expect(await node.tryLock(kept) == Set(kept))
            // From row 150 on every statement fails: the one taking leases, and giving them back.
            try await failLeaseKeys(from: 150, once: false, on: other, logger: logger)
            let ids = sessionIDs(series: 14, count: 300)
            let first = try #require(node.lease.withLock { $0 })
            #expect(await node.tryLock(ids) == [])
            try await eventually("the database holds no lock for the node", timeout: .seconds(20)) {
                try await advisoryLocks(seenBy: other, logger: logger) == 0
            }
            try await eventually("the node connects again", timeout: .seconds(20)) {
                node.lease.withLock { $0.map { $0 !== first } ?? false }
            }
            #expect(node.held.withLock { $0 }.isEmpty, "the node knows it holds nothing")
        }
    }

    /// Has the database fail lease statements from their `row`th lease key on (once, or every
    /// time): PostgreSQL takes a statement's locks row by row and keeps them through its error.
    ///
    /// A function of the test database's own shadows `pg_catalog.hashtextextended(text, int8)`
    /// for the node's `hashtextextended(id, 0)`, whose `0` matches its `integer` exactly. A
    /// sequence counts the calls: its values are not rolled back with the failed statement.
    private func failLeaseKeys(from row: Int, once: Bool, on other: PostgresConnection, logger: Logger) async throws {
        let comparison = once ? "=" : ">="
        _ = try await other.query("CREATE SEQUENCE lease_key_calls", logger: logger)
        _ = try await other.query(
            PostgresQuery(unsafeSQL: """
                CREATE FUNCTION public.hashtextextended(id text, seed integer) RETURNS bigint LANGUAGE plpgsql AS $$
                BEGIN
                    IF nextval('lease_key_calls') \(comparison) \(row) THEN
                        RAISE EXCEPTION 'out of shared memory (the test''s own)';
                    END IF;
                    RETURN pg_catalog.hashtextextended(id, seed);
                END $$
                """), logger: logger)
    }

    /// `count` session ids for one test, told apart by `series` in failure messages.
    private func sessionIDs(series: Int, count: Int) -> [SessionID] {
        (1...count).map { SessionID(String(format: "00000000-0000-0000-%04d-%012d", series, $0)) }
    }

    /// How many advisory locks anyone holds in the test's database.
    private func advisoryLocks(seenBy other: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await other.query(
            """
            SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
            WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()
            """, logger: logger)
        var count = 0
        for try await n in rows.decode(Int64.self) { count = Int(n) }
        return count
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
