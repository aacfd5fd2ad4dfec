import Logging
import PostgresNIO

extension PostgresConnection {
    /// The backends of this connection's database (other than its own) that run `statement`
    /// and wait for `event` (`relation` for a lock on a table, say).
    func backends(running statement: String, waitingFor event: String) async throws -> [Int32] {
        let logger = Logger(label: "test")
        // Within a transaction the activity view is read once unless told to read it again.
        for try await _ in try await query("SELECT pg_stat_clear_snapshot()", logger: logger) {}
        let rows = try await query(
            """
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event = \(event) AND strpos(query, \(statement)) > 0
                AND pid <> pg_backend_pid()
            """, logger: logger)
        var pids: [Int32] = []
        for try await pid in rows.decode(Int32.self) { pids.append(pid) }
        return pids
    }
}
