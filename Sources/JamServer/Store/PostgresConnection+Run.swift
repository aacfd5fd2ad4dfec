import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs a statement whose rows nobody reads, to its end. PostgresNIO answers a statement
    /// that returns rows (`SELECT pg_notify(…)`) once it is bound, before it has run: an error
    /// it meets while running, or its time on a lock, only shows to whoever reads the rows. So
    /// the rows are read here, and such an error is thrown rather than lost (and, inside a
    /// transaction, the `COMMIT` after it rolled back without a word).
    func run(_ statement: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await query(statement, logger: logger) {}
    }
}
