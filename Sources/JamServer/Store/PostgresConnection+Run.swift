import Logging
import PostgresNIO

/// A statement for a connection that had closed before it was sent.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the database connection had closed before the statement was sent" }
}

extension PostgresConnection {
    /// Sends a statement and returns its rows; throws `ConnectionClosed` when the connection has
    /// closed, without sending anything.
    ///
    /// PostgresNIO never answers a statement written after its connection closed (its channel
    /// handlers are gone by then, and the write fails without telling anyone), and nothing ends
    /// that wait, a time limit included (`ClusterNode.within` waits for its body). A connection
    /// closes between two statements when the database goes away, or a caller's time limit
    /// closes it (`PostgresSessionStore.closingOnCancel`); a `ROLLBACK` after a statement that
    /// failed because the connection broke is written after the close every time. Every
    /// statement OpenJam sends goes through here.
    @discardableResult
    func send(_ statement: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        guard !isClosed else { throw ConnectionClosed() }
        return try await query(statement, logger: logger)
    }

    /// Runs a statement whose rows nobody reads, to its end. PostgresNIO answers a statement
    /// that returns rows (`SELECT pg_notify(…)`) once it is bound, before it has run: an error
    /// it meets while running, or its time on a lock, only shows to whoever reads the rows. So
    /// the rows are read here, and such an error is thrown rather than lost (and, inside a
    /// transaction, the `COMMIT` after it rolled back without a word).
    func run(_ statement: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await send(statement, logger: logger) {}
    }

    /// Runs `body` in a transaction and commits it; `body`'s own error is thrown as it is, after
    /// a `ROLLBACK` when the connection is still open (PostgresNIO's `withTransaction` sends its
    /// `ROLLBACK` on a closed connection too, and waits for ever).
    func transaction<T>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await send("BEGIN", logger: logger)
        let value: T
        do {
            value = try await body(self)
        } catch {
            if !isClosed {
                do {
                    try await send("ROLLBACK", logger: logger)
                } catch {
                    logger.debug("rolling a transaction back failed", metadata: ["error": "\(error)"])
                }
            }
            throw error
        }
        try await send("COMMIT", logger: logger)
        return value
    }
}
