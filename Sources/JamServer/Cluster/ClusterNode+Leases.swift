import JamProtocol
import Logging
import NIOCore
import PostgresNIO

/// Taking and giving up session leases: advisory locks on the lease connection.
///
/// The node must know of every lock its connection holds. PostgreSQL counts a session-level
/// advisory lock taken twice as two, and keeps one through an error of the statement that
/// took it; a lock the node does not know of keeps every node from a session this one does not
/// serve. So every statement that takes or gives up leases runs in turn (`LeaseTurns`), and one
/// whose outcome is unknown is undone, or its connection closed.
extension ClusterNode {
    /// Takes the leases of those of `ids` no node holds; returns the ones this node holds now.
    ///
    /// Each is asked for only when the node does not hold it when the turn comes, and leases
    /// given up earlier go first, so every lease the statement asks for is one this connection
    /// does not hold: taken once, one release frees it.
    func tryLock(_ ids: [SessionID]) async -> Set<SessionID> {
        guard !ids.isEmpty, await isConnectedOnceTried() else { return [] }
        do {
            // Shielded from the caller's cancellation, and awaited: PostgreSQL takes every lock
            // the statement finds free as it runs, and a cancelled reader stops reading its
            // rows, so the locks of the unread ones would stay held with nobody knowing.
            return try await Task {
                try await self.leaseTurns.inTurn {
                    // Read in turn: the lease loop may have connected again while this waited.
                    guard let connection = self.lease.withLock({ $0 }) else { return [] }
                    await self.sendReleases(on: connection)
                    let already = self.held.withLock { held in Set(ids.filter { held.contains($0) }) }
                    var asked = already
                    let wanted = ids.filter { asked.insert($0).inserted }
                    guard !wanted.isEmpty else { return already }
                    let taken: Set<SessionID>
                    do {
                        taken = try await self.onLease(connection) { connection in
                            let rows = try await connection.send(
                                "SELECT id FROM unnest(\(wanted.map(\.rawValue))) AS t(id) WHERE pg_try_advisory_lock(hashtextextended(id, 0))",
                                logger: self.logger)
                            var taken = Set<SessionID>()
                            for try await id in rows.decode(String.self) { taken.insert(JamID(id)) }
                            return taken
                        }
                    } catch {
                        // A statement that timed out closed its connection, and its locks go with it.
                        if (error as? JamError) != Self.leaseTimedOut { await self.giveBack(wanted, on: connection, after: error) }
                        throw error
                    }
                    // Leases taken on a connection that has broken since went with it. The lease
                    // loop clears `lease` before `held`, so checking one inside the other's lock
                    // leaves no gap. The answer is what the node holds now: a lease released
                    // while the statement ran is not in it.
                    return self.held.withLock { held -> Set<SessionID> in
                        guard self.lease.withLock({ $0 === connection }) else { return [] }
                        held.formUnion(taken)
                        return Set(ids.filter { held.contains($0) })
                    }
                }
            }.value
        } catch {
            logger.warning("taking session leases failed", metadata: ["error": .loggable(error)])
            return held.withLock { held in Set(ids.filter { held.contains($0) }) }
        }
    }

    /// Runs `body` on the lease connection, closing the connection if the database has not
    /// answered within `leaseCheck.limit`.
    ///
    /// A database that stops answering keeps its connections open, and a query it has been
    /// sent cannot be cancelled. Closing the connection fails the query, and the lease loop
    /// then lets every lease go and connects again (`leasesLost`), as when the connection
    /// breaks. A lease the query took meanwhile goes with the connection, so none is held
    /// that this node does not know of. A caller cancelled meanwhile still waits for the
    /// query, at most until the heartbeat's own limit closes the connection: closing it for
    /// one cancelled caller would cost the node every session.
    ///
    /// A statement for a connection that has closed fails before it is sent
    /// (`PostgresConnection.send`): the heartbeat waking just after the node closed its
    /// connection to stop, say.
    func onLease<T: Sendable>(
        _ connection: PostgresConnection, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let limit = leaseCheck.limit
        let value = try await Self.within(limit, timedOut: {
            logger.error("the database did not answer the lease connection in time; letting this node's sessions go", metadata: ["limit": "\(limit)"])
            // Not awaited: the close is local, and its failing of `body` is what ends the wait.
            let _: EventLoopFuture<Void> = connection.close()
        }) { try await body(connection) }
        guard let value else { throw Self.leaseTimedOut }
        return value
    }

    /// A statement on the lease connection went unanswered past `leaseCheck.limit`, and the
    /// connection was closed.
    static let leaseTimedOut = JamError(.unavailable, "the database did not answer in time; try again")

    /// Whether this node holds the lease of `id` now.
    func holds(_ id: SessionID) -> Bool { held.withLock { $0.contains(id) } }

    /// Gives up the lease of `id` (its session ended): each lease takes a slot of
    /// PostgreSQL's lock table for as long as it is held.
    func release(_ id: SessionID) {
        guard held.withLock({ $0.remove(id) }) != nil else { return }
        outgoing.withLock { $0.unlocks.append(id) }
        wakeReleaser.yield()
    }

    /// Sends the releases queued so far, in a turn of their own (the node's release loop).
    func sendReleases() async {
        guard outgoing.withLock({ !$0.unlocks.isEmpty }) else { return }
        await leaseTurns.inTurn {
            guard let connection = self.lease.withLock({ $0 }) else { return }
            await self.sendReleases(on: connection)
        }
    }

    /// Sends the releases queued so far; call it in a turn.
    ///
    /// Where the statement fails the connection is closed: how many of its locks it gave back
    /// is unknown, and a closed connection's locks all go (the lease loop then lets every
    /// lease go and connects again).
    private func sendReleases(on connection: PostgresConnection) async {
        let unlocks = outgoing.withLock { outgoing in
            defer { outgoing.unlocks = [] }
            return outgoing.unlocks
        }
        guard !unlocks.isEmpty else { return }
        do {
            try await onLease(connection) { connection in
                let rows = try await connection.send(
                    "SELECT pg_advisory_unlock(hashtextextended(id, 0)) FROM unnest(\(unlocks.map(\.rawValue))) AS t(id)",
                    logger: self.logger)
                for try await _ in rows {}
            }
        } catch {
            abandon(connection, because: "giving up session leases failed", error: error)
        }
    }

    /// Gives back whatever of `wanted` a lease statement that failed took before it failed.
    ///
    /// PostgreSQL took each lock as it read the statement's rows, and keeps them through the
    /// error (its lock table full, say). None of `wanted` was held when the statement began,
    /// so giving each back once undoes it exactly; one the statement did not take is not held,
    /// and giving it back changes nothing. Where that fails too, the connection is closed.
    private func giveBack(_ wanted: [SessionID], on connection: PostgresConnection, after failure: any Error) async {
        // Closed (a statement that timed out closes it): its locks went with it.
        guard !connection.isClosed, lease.withLock({ $0 === connection }) else { return }
        do {
            try await onLease(connection) { connection in
                let rows = try await connection.send(
                    "SELECT count(*) FROM unnest(\(wanted.map(\.rawValue))) AS t(id) WHERE pg_advisory_unlock(hashtextextended(id, 0))",
                    logger: self.logger)
                var given = Int64(0)
                for try await count in rows.decode(Int64.self) { given = count }
                self.logger.warning(
                    "a lease statement failed part way; gave back the leases it had taken",
                    metadata: ["leases.given_back": "\(given)", "error": .loggable(failure)])
            }
        } catch {
            abandon(connection, because: "giving back the leases of a failed statement failed", error: error)
        }
    }

    /// Closes `connection`, which may hold locks the node does not know of: the lease loop
    /// then lets every lease go and connects again.
    private func abandon(_ connection: PostgresConnection, because reason: String, error: any Error) {
        guard !connection.isClosed, lease.withLock({ $0 === connection }) else { return }
        logger.error("\(reason); closing the lease connection, which lets this node's sessions go", metadata: ["error": .loggable(error)])
        // Not awaited: the lease loop waits on the connection, and its ending is what follows.
        let _: EventLoopFuture<Void> = connection.close()
    }
}
