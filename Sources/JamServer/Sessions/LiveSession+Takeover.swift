import Foundation
import JamCore
import JamProtocol
import NIOCore

/// Several nodes: a replica becomes the owner when the lease is free; a node lets a session
/// go when it can no longer vouch for it.
extension LiveSession {
    /// This node took the session's lease: it reads the log to its end, becomes the owner,
    /// counts its own sockets connected again, and applies what waits in the inbox.
    func promote(entry: StoredSessionEntry?) async {
        guard role == .replica, !releasedFlag.load(ordering: .relaxed) else { return }
        while await readLog() {}
        guard !releasedFlag.load(ordering: .relaxed) else { return }
        role = .owner
        indexed = entry
        takenInbox = [:]
        // Callers waiting on this node for the old owner's answer: the commands are in the
        // inbox, and their answers now come from here.
        for (key, pending) in forwards {
            if case .rest(let continuation) = pending {
                forwards[key] = nil
                continuation.resume(returning: .failure(JamError(.unavailable, "the session moved to another server meanwhile; try again")))
            }
        }
        logger.notice("took the session over", metadata: ["record.lsn": "\(nextLsn - 1)"])
        do {
            try take(.restart(environment.timing), cause: .tick)
            for connection in connections.values {
                try take(.command(.connect, by: connection.user), cause: .command(.connect, by: connection.user, connection: nil, relay: nil))
            }
            try take(.advance, cause: .tick)
        } catch {
            logger.error("taking the session over failed", metadata: ["error": "\(error)"])
        }
        rescheduleTimer()
        await drainInbox()
    }

    /// Lets the session go from this node: its sockets close so their clients reconnect (to
    /// any node, resuming from their last `seq`), and callers waiting on it get a clear error.
    func release(_ reason: String) {
        guard !releasedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        logger.warning("letting the session go", metadata: ["reason": "\(reason)"])
        stopTimers()
        for (_, pending) in forwards {
            if case .rest(let continuation) = pending {
                continuation.resume(returning: .failure(JamError(.unavailable, "the session moved to another server; try again")))
            }
        }
        forwards.removeAll()
        releaseWaiters()
        var deliveries: [RealtimeConnection.Delivery] = []
        for (key, connection) in connections {
            outbox.detach(key)
            Metrics.connections.decrement()
            deliveries.append(.init(connection: connection, frames: [], close: (.normal, "the session moved to another server; reconnect")))
        }
        connections.removeAll()
        RealtimeConnection.deliver(deliveries)
    }
}
