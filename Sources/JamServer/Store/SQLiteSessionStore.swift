import Foundation
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import VaporCSQLite

/// The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a committed
/// batch survives a killed process and a power cut.
///
/// Group commits run on the commit pipeline's own thread through one connection with
/// prepared statements: one transaction, one fsync per batch. SQLite's automatic checkpoint
/// is off (it would run inside whichever commit crossed the threshold and copy the whole
/// log); `SQLiteCheckpointer` moves the log into the database from another connection beside
/// the commits instead. Under sustained writes that alone never lets the log start over (a
/// reset needs every frame copied when a write begins), so once the log passes
/// `resetFrames` the writer copies the few frames the checkpointer has not reached yet
/// between two batches, once the first one's sessions have been told (`afterCommit`): the log then starts over, and its writes reuse the same blocks
/// rather than growing the file. Reads (the index, a session being brought back) use a
/// third connection on a thread pool.
public final class SQLiteSessionStore: SessionStore, @unchecked Sendable {
    // Thread confinement instead of locks: `writer` is used only by `commit`, which the
    // pipeline calls on its loop one batch at a time; `reader` only under its mutex.
    private let writer: SQLiteDatabase
    private let reader: Mutex<SQLiteDatabase?>
    private let checkpointer: SQLiteCheckpointer
    private let logger: Logger
    /// The database file.
    public let path: String
    /// Log size (frames) from which the writer helps the log start over.
    static let resetFrames: Int32 = 2_048

    private init(path: String, writer: SQLiteDatabase, reader: SQLiteDatabase, logger: Logger, checkpointInterval: Duration) {
        self.path = path
        self.writer = writer
        self.reader = Mutex(reader)
        self.logger = logger
        checkpointer = SQLiteCheckpointer(path: path, interval: checkpointInterval, logger: logger)
    }

    /// Frames the reserved log holds beyond `resetFrames`: the batch that crosses the mark.
    static let reserveSlackFrames: Int32 = 256

    /// Opens (creating when needed) the database at `path` and brings its schema up to date;
    /// with `reserveLog` its write-ahead log is then written out to the size it keeps while
    /// it starts over (`SQLiteLogReserve`), so the server's commits rewrite blocks instead of
    /// allocating them.
    public static func open(
        path: String, logger: Logger, checkpointInterval: Duration = .milliseconds(500), reserveLog: Bool = false
    ) throws -> SQLiteSessionStore {
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("PRAGMA journal_mode=WAL")
        try writer.execute("PRAGMA synchronous=FULL")
        try writer.execute("PRAGMA busy_timeout=5000")
        // Checkpoints run beside the commits (SQLiteCheckpointer), never inside one.
        try writer.execute("PRAGMA wal_autocheckpoint=0")
        // After a burst the log is cut back to 64 MiB; below that it is reused in place, which
        // keeps its fsyncs free of file-size changes.
        try writer.execute("PRAGMA journal_size_limit=67108864")
        // sqlite-nio builds SQLite to overwrite deleted rows with zeros; pruning a session's
        // old records would then rewrite every page they were on.
        try writer.execute("PRAGMA secure_delete=OFF")
        writer.trackLogSize()
        try SQLiteMigrations.migrate(writer, logger: logger)
        if reserveLog { Self.reserveLog(of: writer, logger: logger) }
        let reader = try SQLiteDatabase(path: path, create: false)
        try reader.execute("PRAGMA busy_timeout=5000")
        return SQLiteSessionStore(path: path, writer: writer, reader: reader, logger: logger, checkpointInterval: checkpointInterval)
    }

    public var services: [any Service] { [checkpointer] }

    /// Reserves the log `writer` has open, holding the write lock (a writer in another
    /// process waits rather than commits into the stretch being zeroed). Any failure is
    /// logged, not thrown: the log then grows as it is written, as without this.
    private static func reserveLog(of writer: SQLiteDatabase, logger: Logger) {
        do {
            guard let pageSize = try writer.query("PRAGMA page_size", row: { $0.integer(0) }).first, let log = writer.logPath else {
                logger.warning("the write-ahead log is not reserved: SQLite names no page size or log file")
                return
            }
            let bytes = SQLiteLogReserve.bytes(frames: Int(resetFrames + reserveSlackFrames), pageSize: Int(pageSize))
            let written = try writer.transaction { try SQLiteLogReserve.reserve(path: log, bytes: bytes) }
            logger.debug("reserved the write-ahead log", metadata: ["bytes": "\(bytes)", "written": "\(written)"])
        } catch {
            logger.warning("the write-ahead log is not reserved; it grows as it is written", metadata: ["error": .loggable(error)])
        }
    }

    /// The log's length in frames after the writer's last transaction (tests).
    var logFrames: Int32 { writer.logFrames }

    /// Runs one checkpoint now (tests).
    func checkpointNow() throws -> (walPages: Int32, checkpointed: Int32) { try checkpointer.checkpoint() }

    // MARK: Reads

    public func loadIndex() async throws -> [StoredSessionEntry] {
        try await read { database in
            try database.query(
                """
                SELECT s.id, s.join_code, s.code_issued_at, s.ended,
                    (SELECT p.lsn FROM session_snapshots p WHERE p.session_id = s.id ORDER BY p.lsn DESC LIMIT 1),
                    (SELECT p.wake_at FROM session_snapshots p WHERE p.session_id = s.id ORDER BY p.lsn DESC LIMIT 1),
                    (SELECT l.lsn FROM session_log l WHERE l.session_id = s.id ORDER BY l.lsn DESC LIMIT 1),
                    (SELECT l.wake_at FROM session_log l WHERE l.session_id = s.id ORDER BY l.lsn DESC LIMIT 1)
                FROM sessions s
                """
            ) { row in
                // The newest of snapshot and log says when the session next needs waking.
                let snapshotLsn = row.optionalInteger(4) ?? -1
                let logLsn = row.optionalInteger(6) ?? -1
                let wakeAt = logLsn > snapshotLsn ? row.optionalInteger(7) : row.optionalInteger(5)
                return StoredSessionEntry(
                    id: JamID(row.text(0)), joinCode: row.text(1), codeIssuedAt: row.integer(2), ended: row.integer(3) != 0, wakeAt: wakeAt)
            }
        }
    }

    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        // One read transaction for all three reads: a snapshot written and the log pruned
        // behind it between two of them would otherwise leave a gap after the snapshot read.
        try await read { database in try database.readTransaction {
            let snapshots = try database.query(
                "SELECT lsn, seq, wake_at, state, answers FROM session_snapshots WHERE session_id = ?1 ORDER BY lsn", [.text(id.rawValue)]
            ) { row in
                SessionSnapshot(
                    lsn: row.integer(0), seq: row.integer(1), wakeAt: row.optionalInteger(2), state: row.blob(3),
                    answers: try LogCoding.decodeAnswers(row.blob(4), session: id, snapshotAt: row.integer(0)))
            }
            guard let oldest = snapshots.first else {
                let indexed = try database.query("SELECT 1 FROM sessions WHERE id = ?1", [.text(id.rawValue)]) { _ in true }
                if indexed.isEmpty { return nil }
                throw DamagedStoredSession.snapshotsMissing(id)
            }
            let records = try database.query(
                "SELECT lsn, first_seq, last_seq, wake_at, inputs, answer_key, answer FROM session_log WHERE session_id = ?1 AND lsn > ?2 ORDER BY lsn",
                [.text(id.rawValue), .integer(oldest.lsn)]
            ) { row in
                let lsn = row.integer(0)
                let answer = try StoredAnswer.stored(key: row.optionalText(5), frame: row.optionalText(6), session: id, lsn: lsn)
                return LogRecord(
                    lsn: lsn, firstSeq: row.integer(1), lastSeq: row.integer(2), wakeAt: row.optionalInteger(3),
                    inputs: row.blob(4), answer: answer)
            }
            return StoredSession(snapshots: snapshots, records: records)
        } }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive {
            try self.reader.withLock { database in
                guard let database else { throw SQLiteFailure(status: SQLITE_MISUSE, message: "the store is closed", sql: nil) }
                return try body(database)
            }
        }
    }

    // MARK: Writes

    public func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
        do {
            try writer.transaction {
                for write in writes { try apply(write) }
            }
            return loop.makeSucceededVoidFuture()
        } catch {
            return loop.makeFailedFuture(error)
        }
    }

    /// Lets the log start over once it passes `resetFrames`: a passive checkpoint copies and
    /// syncs the frames the checkpointer has not reached yet. After the batch's answers, as
    /// its database fsync can take tens of milliseconds on a slow disk.
    public func afterCommit() {
        guard writer.logFrames >= Self.resetFrames else { return }
        do {
            // Busy when the checkpointer is at it: the next batch tries again.
            _ = try writer.checkpoint()
        } catch {
            logger.debug("the writer's checkpoint failed", metadata: ["error": .loggable(error)])
        }
    }

    private func apply(_ write: StoreWrite) throws {
        switch write {
        case .index(let entry):
            try writer.run(
                """
                INSERT INTO sessions (id, join_code, code_issued_at, ended) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT(id) DO UPDATE SET join_code = excluded.join_code, code_issued_at = excluded.code_issued_at, ended = excluded.ended
                """,
                [.text(entry.id.rawValue), .text(entry.joinCode), .integer(entry.codeIssuedAt), .integer(entry.ended ? 1 : 0)])
        case .record(let id, let record):
            try writer.run(
                """
                INSERT INTO session_log (session_id, lsn, first_seq, last_seq, wake_at, inputs, answer_key, answer)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """,
                [.text(id.rawValue), .integer(record.lsn), .integer(record.firstSeq), .integer(record.lastSeq),
                 record.wakeAt.map { .integer($0) } ?? .null, .blob(record.inputs),
                 record.answer.map { .text($0.key) } ?? .null, record.answer.map { .text($0.frame) } ?? .null])
        case .consumed:
            // Only nodes sharing PostgreSQL forward commands; an embedded store has no inbox.
            break
        case .purge(let id):
            for table in ["session_log", "session_snapshots"] {
                try writer.run("DELETE FROM \(table) WHERE session_id = ?1", [.text(id.rawValue)])
            }
            try writer.run("DELETE FROM sessions WHERE id = ?1", [.text(id.rawValue)])
        case .dropTail(let id, let from):
            for table in ["session_log", "session_snapshots"] {
                try writer.run("DELETE FROM \(table) WHERE session_id = ?1 AND lsn >= ?2", [.text(id.rawValue), .integer(from)])
            }
        case .snapshot(let id, let snapshot):
            try writer.run(
                """
                INSERT OR REPLACE INTO session_snapshots (session_id, lsn, seq, wake_at, state, answers, written_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """,
                [.text(id.rawValue), .integer(snapshot.lsn), .integer(snapshot.seq), snapshot.wakeAt.map { .integer($0) } ?? .null,
                 .blob(snapshot.state), .blob(LogCoding.encode(snapshot.answers)), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
            // The one before this snapshot is now the oldest kept: older ones, and the records
            // it includes, go.
            let kept = try writer.query(
                "SELECT lsn FROM session_snapshots WHERE session_id = ?1 ORDER BY lsn DESC LIMIT 1 OFFSET 1", [.text(id.rawValue)]
            ) { $0.integer(0) }
            if let oldest = kept.first {
                try writer.run("DELETE FROM session_snapshots WHERE session_id = ?1 AND lsn < ?2", [.text(id.rawValue), .integer(oldest)])
                try writer.run("DELETE FROM session_log WHERE session_id = ?1 AND lsn <= ?2", [.text(id.rawValue), .integer(oldest)])
            }
        }
    }

    public func close() async throws {
        await checkpointer.stop()
        reader.withLock { database in
            database?.close()
            database = nil
        }
        // The last connection to close moves the log into the database and removes it.
        writer.close()
    }
}

/// Moves the write-ahead log into the database file from its own connection, beside the
/// commits (a passive checkpoint never blocks a writer), so no commit pays for it.
final class SQLiteCheckpointer: Service, Sendable {
    private let path: String
    private let interval: Duration
    private let logger: Logger
    private let connection = Mutex<SQLiteDatabase?>(nil)

    init(path: String, interval: Duration, logger: Logger) {
        self.path = path
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            } catch {
                break
            }
            do {
                _ = try await NIOThreadPool.singleton.runIfActive { try self.checkpoint() }
            } catch {
                logger.warning("a checkpoint of the store failed; the next one retries", metadata: ["error": .loggable(error)])
            }
        }
        await stop()
    }

    /// One passive checkpoint: the log's frames, and how many of them are now in the database.
    @discardableResult
    func checkpoint() throws -> (walPages: Int32, checkpointed: Int32) {
        try connection.withLock { connection in
            if connection == nil {
                let database = try SQLiteDatabase(path: path, create: false)
                try database.execute("PRAGMA busy_timeout=100")
                // A connection learns the database is in WAL mode only once it reads it; until
                // then a checkpoint is silently a no-op.
                try database.execute("PRAGMA journal_mode=WAL")
                connection = database
            }
            return try connection!.checkpoint()
        }
    }

    /// Closes the checkpoint connection (idempotent).
    func stop() async {
        connection.withLock { database in
            database?.close()
            database = nil
        }
    }
}
