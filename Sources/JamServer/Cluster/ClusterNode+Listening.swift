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
    ///
    /// The node takes requests on a connection only once it listens on all three channels:
    /// before, a record or an answer to a forwarded command committed meanwhile would be
    /// announced to nobody, and its caller would wait for its time limit.
    func leaseLoop() async {
        var attempt = 0
        while !Task.isCancelled {
            var connection: PostgresConnection?
            var failure: (any Error)?
            do {
                let opened = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.next(), configuration: store.location.connectionConfiguration(), id: 0,
                    logger: logger
                ).get()
                connection = opened
                try await shortenDeadPeerTimeouts(opened)
                let comingBack = attempt > 0
                try await listen(on: opened) {
                    self.lease.withLock { $0 = opened }
                    self.triedOnce.store(true, ordering: .releasing)
                    if comingBack { self.logger.notice("the database is back; this node takes sessions again") }
                    // Sessions loaded while the node was not listening missed what was announced meanwhile.
                    await self.handler?.resynchronize()
                }
            } catch {
                failure = error
            }
            triedOnce.store(true, ordering: .releasing)
            let held = lease.withLock { held -> PostgresConnection? in
                defer { held = nil }
                return held
            }
            // Closed whatever failed, also when cancelled: an open connection would keep its locks.
            if let connection { _ = try? await connection.close() }
            if held != nil {
                attempt = 0
                self.held.withLock { $0.removeAll() }
                // Their locks went with the connection: given up on the next one, they could
                // free leases taken there since.
                outgoing.withLock { $0.unlocks.removeAll() }
                await handler?.leasesLost()
            }
            if Task.isCancelled { return }
            if attempt == 0, let failure {
                logger.error("lost the database connection holding this node's leases", metadata: ["error": .loggable(failure)])
            }
            attempt += 1
            do {
                try await Task.sleep(for: .milliseconds(min(2_000, 100 * attempt)))
            } catch {
                return
            }
        }
    }

    /// Has PostgreSQL notice within ~10 s that this node's lease connection is gone.
    ///
    /// PostgreSQL keeps a connection's advisory locks until it sees the connection close. A
    /// node cut off by the network cannot tell it, and with the system's TCP defaults (a first
    /// keepalive after two hours) no other node could take that node's sessions over for as
    /// long. The node itself lets them go after `leaseCheck.limit` (8 s) without answers;
    /// keepalives after 5 s of silence, 1 s apart, 5 unanswered (and unacknowledged data for
    /// 10 s, from PostgreSQL 12 on) have the database drop the connection soon after. A peer
    /// that is there answers keepalives from its kernel, so a busy node is never dropped.
    private func shortenDeadPeerTimeouts(_ connection: PostgresConnection) async throws {
        try await onLease(connection) { connection in
            let rows = try await connection.send(
                """
                SELECT set_config('tcp_keepalives_idle', '5', false), set_config('tcp_keepalives_interval', '1', false),
                    set_config('tcp_keepalives_count', '5', false),
                    CASE WHEN current_setting('server_version_num')::int >= 120000
                        THEN set_config('tcp_user_timeout', '10000', false) END
                """, logger: self.logger)
            for try await _ in rows {}
        }
    }

    /// Listens on the three channels until the connection breaks or the database stops
    /// answering on it; `listening` runs once all three listen.
    private func listen(on connection: PostgresConnection, listening: @escaping @Sendable () async -> Void) async throws {
        // Each listener says when its LISTEN is done: its closure runs only then.
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Whatever ends the group first (a failed heartbeat that left the connection open,
            // say), the listeners end only with the connection.
            defer { let _: EventLoopFuture<Void> = connection.close() }
            group.addTask {
                try await connection.listen(on: Channel.log) { notifications in
                    start.yield()
                    for try await notification in notifications { await self.logNotified(notification.payload) }
                }
            }
            group.addTask {
                try await connection.listen(on: Channel.inbox) { notifications in
                    start.yield()
                    for try await notification in notifications {
                        await self.handler?.inboxFilled(notification.payload.split(separator: "\n").map { JamID(String($0)) })
                    }
                }
            }
            group.addTask {
                try await connection.listen(on: Channel.reply) { notifications in
                    start.yield()
                    for try await notification in notifications { await self.replyNotified(notification.payload) }
                }
            }
            group.addTask {
                var count = 0
                for await _ in started {
                    count += 1
                    if count == 3 { break }
                }
                // Fewer only when the group is cancelled: a listener failed, or the node stops.
                guard count == 3 else { throw CancellationError() }
                // A LISTEN takes effect when its transaction commits, after its answer; the next
                // statement on the connection runs after that. This one also says the database
                // answers before the node takes requests.
                try await self.ask(connection)
                await listening()
                // A database that stops answering sends nothing and keeps the connection open:
                // asking it something now and then is how the node notices.
                while true {
                    try await Task.sleep(for: self.leaseCheck.every)
                    try await self.ask(connection)
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

    /// Asks the database something on the lease connection: it answers, or this throws.
    private func ask(_ connection: PostgresConnection) async throws {
        _ = try await onLease(connection) { connection in
            try await connection.send("SELECT 1", logger: self.logger)
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
            logger.warning("a reply notification does not read", metadata: ["error": .loggable(error)])
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
            logger.debug("closing the lease connection failed", metadata: ["error": .loggable(error)])
        }
    }
}
