import Logging
import NIOCore
import PostgresNIO

/// A statement for a connection that had closed before it was sent.
struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the database connection had closed before the statement was sent" }
}

extension PostgresConnection {
    /// Sends a statement and returns its rows, read in full; throws `ConnectionClosed` when the
    /// connection has closed, without sending anything.
    ///
    /// PostgresNIO never answers a statement written after its connection closed (its channel
    /// handlers are gone by then, and the write fails without telling anyone), and nothing ends
    /// that wait, a time limit included (`ClusterNode.within` waits for its body). A connection
    /// closes between two statements when the database goes away, or a caller's time limit
    /// closes it (`PostgresSessionStore.closingOnCancel`); a `ROLLBACK` after a statement that
    /// failed because the connection broke is written after the close every time. Every
    /// statement OpenJam sends goes through here.
    ///
    /// The rows are read in full even when nobody wants them: PostgresNIO answers a statement
    /// that returns rows (`SELECT pg_notify(…)`) once it is bound, before it has run, so an
    /// error it meets while running, or its time on a lock, only shows to whoever reads the
    /// rows. Read here, such an error is thrown rather than lost (and, inside a transaction,
    /// the `COMMIT` after it rolled back without a word).
    ///
    /// The check and the write happen in one turn of the connection's event loop, where a close
    /// also runs: an open connection takes the statement into its handler, which fails it if
    /// the connection closes later. Checked from any other thread, a close could land between
    /// the two.
    @discardableResult
    func send(_ statement: PostgresQuery, logger: Logger) async throws -> StatementRows {
        let result = try await eventLoop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
            guard !self.isClosed else { return self.eventLoop.makeFailedFuture(ConnectionClosed()) }
            return self.query(statement, logger: logger)
        }.get()
        return StatementRows(rows: result.rows)
    }

    /// Runs `body` in a transaction that `begin` starts, and commits it; `body`'s own error is
    /// thrown as it is, after a `ROLLBACK` when the connection is still open (PostgresNIO's
    /// `withTransaction` sends its `ROLLBACK` on a closed connection too, and waits for ever).
    func transaction<T>(logger: Logger, begin: PostgresQuery = "BEGIN", _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await send(begin, logger: logger)
        let value: T
        do {
            value = try await body(self)
        } catch {
            if !isClosed {
                do {
                    try await send("ROLLBACK", logger: logger)
                } catch {
                    logger.debug("rolling a transaction back failed", metadata: ["error": .loggable(error)])
                }
            }
            throw error
        }
        try await send("COMMIT", logger: logger)
        return value
    }
}

/// A statement's rows, read in full before `PostgresConnection.send` returned; PostgresNIO's
/// `decode` reads them as it reads a row sequence.
struct StatementRows: AsyncSequence, Sendable {
    typealias Element = PostgresRow

    let rows: [PostgresRow]

    /// Hands out the rows in order.
    struct AsyncIterator: AsyncIteratorProtocol {
        var rows: IndexingIterator<[PostgresRow]>

        mutating func next() async throws -> PostgresRow? { rows.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rows: rows.makeIterator()) }
}

extension PostgresClient {
    /// Runs `body` in a transaction on a connection of the pool (`PostgresConnection.transaction`).
    func transaction<T: Sendable>(logger: Logger, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withConnection { try await $0.transaction(logger: logger, body) }
    }
}
