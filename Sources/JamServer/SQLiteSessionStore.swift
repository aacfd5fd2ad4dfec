import Foundation
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO

/// The embedded store: one SQLite file in WAL mode, `synchronous=FULL`, so a
/// committed batch survives a killed process and a power cut.
public actor SQLiteSessionStore: SessionStore {
    private let connection: SQLiteConnection
    private let logger: Logger

    private init(connection: SQLiteConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Opens (creating when needed) the database at `path` and brings its schema up to date.
    public static func open(path: String, logger: Logger) async throws -> SQLiteSessionStore {
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: .singleton, logger: logger,
            on: MultiThreadedEventLoopGroup.singleton.any())
        do {
            // One statement per call: the driver runs only the first of a list.
            _ = try await connection.query("PRAGMA journal_mode=WAL")
            _ = try await connection.query("PRAGMA synchronous=FULL")
            _ = try await connection.query("PRAGMA busy_timeout=5000")
            _ = try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS sessions (
                    id TEXT PRIMARY KEY,
                    join_code TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    ended INTEGER NOT NULL,
                    state BLOB NOT NULL,
                    updated_at INTEGER NOT NULL
                )
                """)
            _ = try await connection.query("CREATE INDEX IF NOT EXISTS sessions_live ON sessions(ended)")
        } catch {
            try? await connection.close()
            throw error
        }
        return SQLiteSessionStore(connection: connection, logger: logger)
    }

    public func loadAll() async throws -> [StoredSession] {
        let rows = try await connection.query("SELECT id, join_code, seq, ended, state FROM sessions")
        return try rows.map { row in
            guard let id = row.column("id")?.string, let code = row.column("join_code")?.string,
                  let seq = row.column("seq")?.integer, let ended = row.column("ended")?.integer,
                  let blob = row.column("state")?.blob
            else {
                throw JamError(.internal, "a stored session row is incomplete")
            }
            return StoredSession(id: JamID(id), joinCode: code, seq: Int64(seq), ended: ended != 0, state: Array(buffer: blob))
        }
    }

    public func write(_ rows: [StoredSession]) async throws {
        guard !rows.isEmpty else { return }
        let now = Int(Date().timeIntervalSince1970 * 1000)
        // One statement for the whole batch: a single statement is its own transaction, and
        // each statement is a trip to SQLite's thread and back (~0.2 ms here), so a batch of
        // a hundred sessions costs one trip instead of a hundred and two.
        if rows.count <= Self.rowsPerStatement {
            try await upsert(rows[...], now: now)
        } else {
            try await writeInTransaction(rows, now: now)
        }
    }

    /// Rows per statement: SQLite allows 32,766 bound values, six per row.
    static let rowsPerStatement = 5_000

    private func upsert(_ rows: ArraySlice<StoredSession>, now: Int) async throws {
        var binds: [SQLiteData] = []
        binds.reserveCapacity(rows.count * 6)
        var values: [String] = []
        values.reserveCapacity(rows.count)
        for row in rows {
            let base = binds.count
            values.append("(?\(base + 1), ?\(base + 2), ?\(base + 3), ?\(base + 4), ?\(base + 5), ?\(base + 6))")
            binds += [.text(row.id.rawValue), .text(row.joinCode), .integer(Int(row.seq)), .integer(row.ended ? 1 : 0),
                      .blob(ByteBuffer(bytes: row.state)), .integer(now)]
        }
        _ = try await connection.query(
            """
            INSERT INTO sessions (id, join_code, seq, ended, state, updated_at) VALUES \(values.joined(separator: ", "))
            ON CONFLICT(id) DO UPDATE SET join_code = excluded.join_code, seq = excluded.seq, ended = excluded.ended,
                state = excluded.state, updated_at = excluded.updated_at
            """,
            binds)
    }

    /// Batches too big for one statement: several statements in one transaction.
    private func writeInTransaction(_ rows: [StoredSession], now: Int) async throws {
        _ = try await connection.query("BEGIN IMMEDIATE")
        do {
            for start in stride(from: 0, to: rows.count, by: Self.rowsPerStatement) {
                try await upsert(rows[start..<min(start + Self.rowsPerStatement, rows.count)], now: now)
            }
            _ = try await connection.query("COMMIT")
        } catch {
            do {
                _ = try await connection.query("ROLLBACK")
            } catch let rollbackError {
                logger.error("rollback failed", metadata: ["error": "\(rollbackError)"])
            }
            throw error
        }
    }

    public func close() async throws {
        try await connection.close()
    }
}
