import JamCore
import JamProtocol

/// One session's row as the store keeps it.
public struct StoredSession: Sendable {
    public var id: SessionID
    public var joinCode: String
    public var seq: Int64
    public var ended: Bool
    /// The encoded `SessionState`.
    public var state: [UInt8]
}

/// Where sessions live between restarts. Writes come in batches (group commit).
public protocol SessionStore: Sendable {
    /// Every stored session, ended ones included.
    func loadAll() async throws -> [StoredSession]
    /// Stores all rows in one transaction; returns only once they are durable.
    func write(_ rows: [StoredSession]) async throws
    /// Releases the store.
    func close() async throws
}
