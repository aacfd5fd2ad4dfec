import Foundation
import JamProtocol
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A batch appended to a session whose log had moved on, or created one under an id already
/// taken: another node wrote it meanwhile.
public struct StoreConflict: Error, CustomStringConvertible, Sendable {
    /// The sessions whose records did not follow the stored log, or whose id another writer
    /// had created a session under.
    public let sessions: [SessionID]
    public var description: String { "another writer wrote \(sessions.map(\.rawValue).joined(separator: ", ")) first" }
}

/// Sessions stored in PostgreSQL, with the embedded store's model (an index, two snapshots and
/// a log per session) and its guarantee: a batch is acknowledged once PostgreSQL has
/// committed it.
///
/// A group commit is one transaction of a handful of statements whatever its size: the
/// records go in as arrays (`unnest`), and one `UPDATE … RETURNING` moves each session's
/// `last_lsn` on only where the batch follows it, which is also what keeps two nodes from
/// both appending record `n` to one session. Each commit tells listening nodes which
/// sessions moved on (`NOTIFY jam_log`, delivered at commit).
public final class PostgresSessionStore: SessionStore, Sendable {
    /// The channel commits notify: lines of "session-id last-lsn".
    public static let logChannel = "jam_log"
    /// Where a notification's payload is cut into parts: PostgreSQL refuses one of 8,000 bytes
    /// or more, and a part cut in SQL may run past the mark by one line.
    static let notificationCut = 7_800

    let client: PostgresClient
    private let runner: PostgresClientRunner
    let location: PostgresLocation
    let logger: Logger

    private init(client: PostgresClient, location: PostgresLocation, logger: Logger) {
        self.client = client
        self.location = location
        self.logger = logger
        runner = PostgresClientRunner(client: client)
    }

    /// Connects to `location` and brings its schema up to date; fails with the server's words
    /// when the database cannot be reached.
    public static func open(_ location: PostgresLocation, logger: Logger) async throws -> PostgresSessionStore {
        var backgroundLogger = logger
        backgroundLogger.logLevel = max(logger.logLevel, .error)
        let client = PostgresClient(configuration: location.clientConfiguration, backgroundLogger: backgroundLogger)
        let store = PostgresSessionStore(client: client, location: location, logger: logger)
        store.runner.start()
        do {
            try await PostgresMigrations.migrate(client, logger: backgroundLogger)
        } catch {
            await store.runner.stop()
            throw error
        }
        return store
    }

    public var services: [any Service] { [] }

    /// The token secret every node on this database signs with: the first `proposed` stored,
    /// kept from then on. Nodes with their own secret files would each accept only the tokens
    /// they signed themselves, and members behind a balancer would be signed out at random.
    public func sharedSecret(proposing proposed: String) async throws -> String {
        try await closingOnCancel { connection in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await connection.send(
                "INSERT INTO token_secret (id, secret, created_at) VALUES (1, \(proposed), \(now)) ON CONFLICT (id) DO NOTHING", logger: self.logger)
            let rows = try await connection.send("SELECT secret FROM token_secret WHERE id = 1", logger: self.logger)
            for try await secret in rows.decode(String.self) { return secret }
            throw JamError(.internal, "the database holds no token secret after one was stored")
        }
    }

    // MARK: Reads

    public func loadIndex() async throws -> [StoredSessionEntry] {
        try await entries(where: "")
    }

    /// How many stored sessions have not ended, whichever node created them.
    public func sessionsNotEnded() async throws -> Int {
        try await closingOnCancel { connection in
            let rows = try await connection.send("SELECT count(*) FROM sessions WHERE NOT ended", logger: self.logger)
            var count: Int64 = 0
            for try await value in rows.decode(Int64.self) { count = value }
            return Int(count)
        }
    }

    /// The index row of `id`, if stored (a session another node created).
    public func entry(_ id: SessionID) async throws -> StoredSessionEntry? {
        try await entries(where: "WHERE s.id = $1", id.rawValue).first
    }

    /// The session, not ended, whose join code is `code`.
    public func entry(code: String) async throws -> StoredSessionEntry? {
        try await entries(where: "WHERE s.join_code = $1 AND NOT s.ended", code).first
    }

    private func entries(where filter: String, _ value: String? = nil) async throws -> [StoredSessionEntry] {
        // The newest record says when the session next needs waking; a session without one
        // (just created) has its snapshot say it.
        var query = PostgresQuery(
            unsafeSQL: """
                SELECT s.id, s.join_code, s.code_issued_at, s.ended,
                    CASE WHEN l.lsn IS NOT NULL THEN l.wake_at ELSE p.wake_at END
                FROM sessions s
                LEFT JOIN session_log l ON l.session_id = s.id AND l.lsn = s.last_lsn
                LEFT JOIN LATERAL (
                    SELECT wake_at FROM session_snapshots WHERE session_id = s.id ORDER BY lsn DESC LIMIT 1) p ON true
                \(filter)
                """)
        if let value { query.binds.append(value) }
        return try await closingOnCancel { [query] connection in
            let rows = try await connection.send(query, logger: self.logger)
            var entries: [StoredSessionEntry] = []
            for try await (id, code, issued, ended, wakeAt) in rows.decode((String, String, Int64, Bool, Int64?).self) {
                entries.append(StoredSessionEntry(id: JamID(id), joinCode: code, codeIssuedAt: issued, ended: ended, wakeAt: wakeAt))
            }
            return entries
        }
    }

    /// Runs `body` on a pooled connection that is closed if the caller is cancelled meanwhile.
    ///
    /// A query PostgreSQL has been sent cannot be cancelled otherwise: a database that stops
    /// answering without closing its connections would keep a caller with a time limit
    /// (`ClusterNode.withDatabase`) waiting for its answer all the same. Closing the
    /// connection fails the query; the pool opens another when next asked.
    func closingOnCancel<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await withTaskCancellationHandler {
                try await body(connection)
            } onCancel: {
                let _: EventLoopFuture<Void> = connection.close()
            }
        }
    }

    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        // One snapshot of the database for both reads: a node pruning the log between them
        // would otherwise leave a gap after the snapshot read.
        try await closingOnCancel { connection in
            try await connection.transaction(logger: self.logger, begin: "START TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                connection -> StoredSession? in
                let snapshots = try await self.snapshots(id, on: connection)
                guard let oldest = snapshots.first else {
                    let indexed = try await connection.send("SELECT 1 FROM sessions WHERE id = \(id.rawValue)", logger: self.logger)
                    for try await _ in indexed { throw DamagedStoredSession.snapshotsMissing(id) }
                    return nil
                }
                let records = try await self.records(id, after: oldest.lsn, on: connection)
                return StoredSession(snapshots: snapshots, records: records)
            }
        }
    }

    /// The records of `id` after `lsn`, in order (a node following a session another node writes).
    public func records(_ id: SessionID, after lsn: Int64) async throws -> [LogRecord] {
        try await closingOnCancel { try await self.records(id, after: lsn, on: $0) }
    }

    /// The records of several sessions, each after its own position, in order (one query for
    /// all the sessions a notification names).
    public func records(after positions: [(SessionID, Int64)]) async throws -> [SessionID: [LogRecord]] {
        try await closingOnCancel { connection in
            let rows = try await connection.send(
                """
                SELECT l.session_id, l.lsn, l.first_seq, l.last_seq, l.wake_at, l.inputs, l.answer_key, l.answer
                FROM unnest(\(positions.map(\.0.rawValue)), \(positions.map(\.1))) AS v(id, after)
                JOIN session_log l ON l.session_id = v.id AND l.lsn > v.after
                ORDER BY l.session_id, l.lsn
                """, logger: self.logger)
            var records: [SessionID: [LogRecord]] = [:]
            for try await (id, lsn, firstSeq, lastSeq, wakeAt, inputs, key, frame) in rows.decode(
                (String, Int64, Int64, Int64, Int64?, ByteBuffer, String?, String?).self)
            {
                let session = JamID(id)
                records[session, default: []].append(
                    LogRecord(
                        lsn: lsn, firstSeq: firstSeq, lastSeq: lastSeq, wakeAt: wakeAt, inputs: Array(buffer: inputs),
                        answer: try StoredAnswer.stored(key: key, frame: frame, session: session, lsn: lsn)))
            }
            return records
        }
    }

    private func snapshots(_ id: SessionID, on connection: PostgresConnection) async throws -> [SessionSnapshot] {
        let rows = try await connection.send(
            "SELECT lsn, seq, wake_at, state, answers FROM session_snapshots WHERE session_id = \(id.rawValue) ORDER BY lsn", logger: logger)
        var snapshots: [SessionSnapshot] = []
        for try await (lsn, seq, wakeAt, state, answers) in rows.decode((Int64, Int64, Int64?, ByteBuffer, ByteBuffer).self) {
            snapshots.append(
                SessionSnapshot(
                    lsn: lsn, seq: seq, wakeAt: wakeAt, state: Array(buffer: state),
                    answers: try LogCoding.decodeAnswers(Array(buffer: answers), session: id, snapshotAt: lsn)))
        }
        return snapshots
    }

    private func records(_ id: SessionID, after lsn: Int64, on connection: PostgresConnection) async throws -> [LogRecord] {
        let rows = try await connection.send(
            """
            SELECT lsn, first_seq, last_seq, wake_at, inputs, answer_key, answer FROM session_log
            WHERE session_id = \(id.rawValue) AND lsn > \(lsn) ORDER BY lsn
            """, logger: logger)
        var records: [LogRecord] = []
        for try await (lsn, firstSeq, lastSeq, wakeAt, inputs, key, frame) in rows.decode(
            (Int64, Int64, Int64, Int64?, ByteBuffer, String?, String?).self)
        {
            records.append(
                LogRecord(
                    lsn: lsn, firstSeq: firstSeq, lastSeq: lastSeq, wakeAt: wakeAt, inputs: Array(buffer: inputs),
                    answer: try StoredAnswer.stored(key: key, frame: frame, session: id, lsn: lsn)))
        }
        return records
    }

    public func close() async throws {
        await runner.stop()
    }
}
