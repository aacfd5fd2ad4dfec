import Foundation
import JamCore
import Logging

/// The embedded store's schema, as named migrations applied in order and recorded in
/// `schema_migrations`, each in its own transaction (GRDB's `DatabaseMigrator` style).
///
/// A data folder of any earlier release opens: its schema is exactly what the migrations
/// before it created, so only the later ones run. Never edit a migration that has shipped;
/// add one.
enum SQLiteMigrations {
    struct Migration: Sendable {
        let name: String
        let apply: @Sendable (SQLiteDatabase, Logger) throws -> Void
    }

    static let all: [Migration] = [
        Migration(name: "2026-11-14 one row per session", apply: oneRowPerSession),
        Migration(name: "2026-11-23 session log", apply: sessionLog),
    ]

    /// Applies every migration the database has not had yet; returns their names.
    @discardableResult
    static func migrate(_ database: SQLiteDatabase, logger: Logger) throws -> [String] {
        try database.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let applied = Set(try database.query("SELECT name FROM schema_migrations") { $0.text(0) })
        var ran: [String] = []
        for migration in all where !applied.contains(migration.name) {
            try database.transaction {
                try migration.apply(database, logger)
                try database.run(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?1, ?2)",
                    [.text(migration.name), .integer(Int64(Date().timeIntervalSince1970 * 1000))])
            }
            logger.info("store migrated", metadata: ["migration": "\(migration.name)"])
            ran.append(migration.name)
        }
        return ran
    }

    /// The first release's schema: each session's whole state as one JSON row. A data folder
    /// of that release has exactly this table (and no `schema_migrations`), so this is a no-op there.
    private static func oneRowPerSession(_ database: SQLiteDatabase, _ logger: Logger) throws {
        try database.execute(
            """
            CREATE TABLE IF NOT EXISTS sessions (
                id TEXT PRIMARY KEY, join_code TEXT NOT NULL, seq INTEGER NOT NULL, ended INTEGER NOT NULL,
                state BLOB NOT NULL, updated_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS sessions_live ON sessions(ended);
            """)
    }

    /// The session log: an index of sessions, the two newest snapshots per session and an
    /// append-only log of records. Each old row becomes its session's first snapshot.
    private static func sessionLog(_ database: SQLiteDatabase, _ logger: Logger) throws {
        try database.execute(
            """
            DROP INDEX IF EXISTS sessions_live;
            ALTER TABLE sessions RENAME TO sessions_rows;
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY, join_code TEXT NOT NULL, code_issued_at INTEGER NOT NULL,
                ended INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            CREATE TABLE session_snapshots (
                session_id TEXT NOT NULL, lsn INTEGER NOT NULL, seq INTEGER NOT NULL, wake_at INTEGER,
                state BLOB NOT NULL, answers BLOB NOT NULL, written_at INTEGER NOT NULL);
            CREATE UNIQUE INDEX session_snapshots_key ON session_snapshots(session_id, lsn);
            CREATE TABLE session_log (
                session_id TEXT NOT NULL, lsn INTEGER NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
                wake_at INTEGER, inputs BLOB NOT NULL, answer_key TEXT, answer TEXT,
                PRIMARY KEY (session_id, lsn)) WITHOUT ROWID;
            """)
        struct Row {
            let id: String, joinCode: String, seq: Int64, ended: Bool, state: [UInt8], updatedAt: Int64
        }
        let rows = try database.query("SELECT id, join_code, seq, ended, state, updated_at FROM sessions_rows") {
            Row(id: $0.text(0), joinCode: $0.text(1), seq: $0.integer(2), ended: $0.integer(3) != 0, state: $0.blob(4), updatedAt: $0.integer(5))
        }
        for row in rows {
            // The state is read only for when its code was issued and when it next needs waking;
            // a row that does not read keeps its bytes and stays unreadable, as before.
            var issuedAt = row.updatedAt
            var wakeAt: Int64?
            do {
                let state = try LogCoding.decodeState(row.state)
                issuedAt = state.createdAt
                wakeAt = state.nextDeadline()
            } catch {
                logger.error("a stored session does not read; it is kept as it is", metadata: ["session.id": "\(row.id)", "error": .loggable(error)])
            }
            try database.run(
                "INSERT INTO sessions (id, join_code, code_issued_at, ended) VALUES (?1, ?2, ?3, ?4)",
                [.text(row.id), .text(row.joinCode), .integer(issuedAt), .integer(row.ended ? 1 : 0)])
            try database.run(
                "INSERT INTO session_snapshots (session_id, lsn, seq, wake_at, state, answers, written_at) VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6)",
                [.text(row.id), .integer(row.seq), wakeAt.map { .integer($0) } ?? .null, .blob(row.state), .blob(Array("[]".utf8)), .integer(row.updatedAt)])
        }
        try database.execute("DROP TABLE sessions_rows")
    }
}
