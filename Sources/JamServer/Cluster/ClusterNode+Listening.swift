import Foundation
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The lease connection: held, listened on, and opened again when it breaks; and the
/// lease poll.
extension ClusterNode {
    func pollLoop() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: leasePoll)
            } catch {
                return
            }
            await handler?.pollLeases()
        }
    }

    /// Holds the lease connection and listens on it; reconnects (and says the leases are lost)
    /// when it breaks.
    func leaseLoop() async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.next(), configuration: store.location.connectionConfiguration(), id: 0,
                    logger: logger
                ).get()
                lease.withLock { $0 = connection }
                if attempt > 0 { logger.notice("the database is back; this node takes sessions again") }
                attempt = 0
                await handler?.resynchronize()
                try await listen(on: connection)
            } catch {
                if Task.isCancelled { return }
                if attempt == 0 { logger.error("lost the database connection holding this node's leases", metadata: ["error": "\(error)"]) }
            }
            let held = lease.withLock { connection -> PostgresConnection? in
                defer { connection = nil }
                return connection
            }
            if let held {
                _ = try? await held.close()
                self.held.withLock { $0.removeAll() }
                await handler?.leasesLost()
            }
            attempt += 1
            do {
                try await Task.sleep(for: .milliseconds(min(2_000, 100 * attempt)))
            } catch {
                return
            }
        }
    }

    /// Listens on the three channels until the connection breaks or the database stops
    /// answering on it.
    private func listen(on connection: PostgresConnection) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.listen(on: Channel.log) { notifications in
                    for try await notification in notifications { await self.logNotified(notification.payload) }
                }
            }
            group.addTask {
                try await connection.listen(on: Channel.inbox) { notifications in
                    for try await notification in notifications {
                        await self.handler?.inboxFilled(notification.payload.split(separator: "\n").map { JamID(String($0)) })
                    }
                }
            }
            group.addTask {
                try await connection.listen(on: Channel.reply) { notifications in
                    for try await notification in notifications { await self.replyNotified(notification.payload) }
                }
            }
            group.addTask {
                // A database that stops answering sends nothing and keeps the connection open:
                // asking it something now and then is how the node notices.
                while true {
                    try await Task.sleep(for: self.leaseCheck.every)
                    try await self.onLease(connection) { connection in
                        for try await _ in try await connection.query("SELECT 1", logger: self.logger) {}
                    }
                }
            }
            group.addTask {
                // The listeners see nothing of a connection that dies quietly; its close does.
                try await connection.closeFuture.get()
                throw JamError(.unavailable, "the lease connection closed")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func logNotified(_ payload: String) async {
        var positions: [(SessionID, Int64)] = []
        for line in payload.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let lsn = Int64(parts[1]) else {
                logger.warning("a log notification does not read", metadata: ["payload": "\(line)"])
                continue
            }
            positions.append((JamID(String(parts[0])), lsn))
        }
        if !positions.isEmpty { await handler?.logMoved(positions) }
    }

    private func replyNotified(_ payload: String) async {
        do {
            let reply = try JSONDecoder().decode(ForwardReply.self, from: Data(payload.utf8))
            guard reply.node == nodeID else { return }
            await handler?.replied(reply)
        } catch {
            logger.warning("a reply notification does not read", metadata: ["error": "\(error)"])
        }
    }

    func closeLease() async {
        let held = lease.withLock { connection -> PostgresConnection? in
            defer { connection = nil }
            return connection
        }
        do {
            try await held?.close()
        } catch {
            logger.debug("closing the lease connection failed", metadata: ["error": "\(error)"])
        }
    }
}
