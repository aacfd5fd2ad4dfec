import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL store's schema, as named migrations applied in order and recorded in
/// `schema_migrations`, each in its own transaction, like the embedded store's.
///
/// Several nodes may start at once against one database: each migration runs under a
/// transaction-scoped advisory lock and looks again, inside it, whether another node applied
/// it meanwhile. Never edit a migration that has shipped; add one.
enum PostgresMigrations {
    struct Migration: Sendable {
        let name: String
        let sql: [String]
    }

    /// The advisory lock key migrations hold ("OJ" + "mig").
    static let lockKey: Int64 = 0x4F4A_6D69_67

    static let all: [Migration] = [
        Migration(
            name: "2026-11-24 session log",
            sql: [
                // `last_lsn` is the session's newest record: a batch appends only right after it
                // (the row lock is what orders two nodes writing one session).
                """
                CREATE TABLE sessions (
                    id text PRIMARY KEY, join_code text NOT NULL, code_issued_at bigint NOT NULL,
                    ended boolean NOT NULL DEFAULT false, last_lsn bigint NOT NULL DEFAULT 0)
                """,
                "CREATE INDEX sessions_join_code ON sessions (join_code) WHERE NOT ended",
                """
                CREATE TABLE session_snapshots (
                    session_id text NOT NULL, lsn bigint NOT NULL, seq bigint NOT NULL, wake_at bigint,
                    state bytea NOT NULL, answers bytea NOT NULL, written_at bigint NOT NULL,
                    PRIMARY KEY (session_id, lsn))
                """,
                """
                CREATE TABLE session_log (
                    session_id text NOT NULL, lsn bigint NOT NULL, first_seq bigint NOT NULL, last_seq bigint NOT NULL,
                    wake_at bigint, inputs bytea NOT NULL, answer_key text, answer text,
                    PRIMARY KEY (session_id, lsn))
                """,
            ]),
        Migration(
            name: "2026-11-24 forwarded commands",
            sql: [
                // Commands a node forwards to the session's owner; a row goes in the transaction
                // of the record that applied it.
                """
                CREATE TABLE session_inbox (
                    id bigserial PRIMARY KEY, session_id text NOT NULL, origin text NOT NULL, connection bigint,
                    reply_id text, input bytea NOT NULL, created_at bigint NOT NULL)
                """,
                "CREATE INDEX session_inbox_session ON session_inbox (session_id, id)",
            ]),
        Migration(
            name: "2026-11-29 shared token secret",
            sql: [
                // One row: the secret every node signs tokens with, when none is configured.
                """
                CREATE TABLE token_secret (
                    id smallint PRIMARY KEY CHECK (id = 1), secret text NOT NULL, created_at bigint NOT NULL)
                """,
            ]),
    ]

    /// Applies every migration the database has not had yet; returns their names.
    @discardableResult
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [String] {
        try await client.transaction(logger: logger) { connection in
            // Two nodes creating the table at once would collide in PostgreSQL's catalogue.
            try await connection.send("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.send(
                "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at bigint NOT NULL)", logger: logger)
        }
        var ran: [String] = []
        for migration in all {
            let applied = try await client.transaction(logger: logger) { connection -> Bool in
                try await connection.send("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                let rows = try await connection.send("SELECT 1 FROM schema_migrations WHERE name = \(migration.name)", logger: logger)
                for try await _ in rows { return false }
                for statement in migration.sql {
                    try await connection.send(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try await connection.send("INSERT INTO schema_migrations (name, applied_at) VALUES (\(migration.name), \(now))", logger: logger)
                return true
            }
            if applied {
                logger.info("store migrated", metadata: ["migration": "\(migration.name)"])
                ran.append(migration.name)
            }
        }
        return ran
    }
}
