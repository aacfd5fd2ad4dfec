import Logging
import ServiceLifecycle
import Synchronization

/// Group commit: sessions mark themselves dirty; this service stores every dirty
/// session of a round in one transaction and only then tells each session which
/// `seq` is durable, so acknowledgements never run ahead of the disk.
public final class PersistenceService: Service, Sendable {
    private let store: any SessionStore
    private let logger: Logger
    private let dirty = Mutex<[ObjectIdentifier: LiveSession]>([:])
    private let wake: AsyncStream<Void>
    private let wakeContinuation: AsyncStream<Void>.Continuation

    /// Creates the service around `store`.
    public init(store: any SessionStore, logger: Logger) {
        self.store = store
        self.logger = logger
        (wake, wakeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `session` for the next batch; cheap and never blocks.
    func markDirty(_ session: LiveSession) {
        dirty.withLock { $0[ObjectIdentifier(session)] = session }
        wakeContinuation.yield()
    }

    public func run() async throws {
        for await _ in wake.cancelOnGracefulShutdown() {
            await writeBatch()
        }
        // Shutting down: whatever is still dirty is stored before the store closes.
        await writeBatch()
        do {
            try await store.close()
        } catch {
            logger.error("closing the store failed", metadata: ["error": "\(error)"])
        }
    }

    /// Stores every dirty session; retries with back-off until the store accepts the batch.
    private func writeBatch() async {
        var backoffMs = 50
        while true {
            let sessions = dirty.withLock { table -> [LiveSession] in
                let taken = Array(table.values)
                table.removeAll(keepingCapacity: true)
                return taken
            }
            guard !sessions.isEmpty else { return }
            var rows: [StoredSession] = []
            rows.reserveCapacity(sessions.count)
            for session in sessions { rows.append(await session.snapshotForStore()) }
            do {
                try await store.write(rows)
                Metrics.persistedBatches.increment()
                Metrics.persistedRows.increment(by: rows.count)
                for (session, row) in zip(sessions, rows) { await session.markDurable(row.seq) }
                return
            } catch {
                logger.error("storing sessions failed; retrying", metadata: ["error": "\(error)", "batch.size": "\(rows.count)"])
                for session in sessions { markDirty(session) }
                do {
                    try await Task.sleep(for: .milliseconds(backoffMs))
                } catch {
                    return
                }
                backoffMs = min(backoffMs * 2, 2000)
            }
        }
    }
}
