import JamProtocol
import Logging
import PostgresNIO

extension PostgresConnection {
    /// Whether another node could take session `id`'s lease now; it gives it back at once.
    func leaseIsFree(_ id: SessionID) async throws -> Bool {
        let logger = Logger(label: "test")
        let rows = try await query("SELECT pg_try_advisory_lock(hashtextextended(\(id.rawValue), 0))", logger: logger)
        var free = false
        for try await taken in rows.decode(Bool.self) { free = taken }
        if free { try await query("SELECT pg_advisory_unlock(hashtextextended(\(id.rawValue), 0))", logger: logger) }
        return free
    }
}
