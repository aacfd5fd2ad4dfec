import Foundation
import JamCore
import JamProtocol
import NIOCore

/// Several nodes: a replica becomes the owner when the lease is free; a node lets a session
/// go when it can no longer vouch for it.
extension LiveSession {
    /// This node took the session's lease: it reads the log to its end, becomes the owner,
    /// counts its own sockets connected again, and applies what waits in the inbox.
    ///
    /// Where it cannot read the log to its end (the database did not answer, or the session
    /// was let go meanwhile) it stays as it was, and the caller gives the lease back: an owner
    /// that had not read every record would write over the last ones.
    ///
    /// Socket commands that come meanwhile wait until this node's own earlier forwards are
    /// applied: a member's command forwarded just before the takeover would otherwise reach the
    /// inbox, and be applied, after the same socket's next one.
    func promote(entry: StoredSessionEntry?) async {
        // The lease poll awaits each takeover, so none runs twice at once; one that did would
        // find the first's held commands.
        guard role == .replica, heldDuringTakeover == nil else { return }
        heldDuringTakeover = []
        defer { applyHeldCommands() }
        var read = LogRead.applied
        while read == .applied { read = await readLog() }
        // An ended session is not taken over: its owner gave the lease back as it ended it, and
        // staying a replica has the caller give it back too, rather than hold it for good.
        guard read == .atEnd, !releasedFlag.load(ordering: .relaxed), !state.hasEnded else { return }
        role = .owner
        indexed = entry
        takenInbox = [:]
        // Callers waiting on this node for the old owner's answer: their commands wait in the
        // inbox and are applied here next, so they hear to read the session before repeating
        // a change, not to try again, which would apply it twice.
        for (key, pending) in forwards {
            if case .rest(let continuation) = pending {
                forwards[key] = nil
                continuation.resume(returning: .failure(Self.letGo))
            }
        }
        logger.notice("took the session over", metadata: ["record.lsn": "\(nextLsn - 1)"])
        // What waits in the inbox was sent to the old owner: applied before the restart, so a
        // socket's connect or disconnect among it counts against the old count the restart
        // clears, not against the sockets counted afresh below (one of a member's two sockets
        // closed while nobody owned the session would otherwise leave them counted as gone).
        // Read after the restart instead, those rows would count twice: unreadable now, the
        // session is let go rather than counted wrong. This node's own forwards still on their
        // way (its sockets' commands and connects) are among them once the forwarder is done.
        await environment.cluster?.forwardsSent()
        guard await drainInbox(waitingForRunning: true) else {
            release("the inbox could not be read while taking the session over")
            return
        }
        guard role == .owner, !releasedFlag.load(ordering: .relaxed) else { return }
        // Disconnects still waiting (this node's own, or the inbox's that the store refused just
        // now) were for that old count too: the restart does what they would.
        let stale = forwardsWaiting.filter { Self.isDeparture($0.forwarded) }.map(\.forwarded.inboxId).filter { $0 != 0 }
        forwardsWaiting.removeAll { Self.isDeparture($0.forwarded) }
        if !stale.isEmpty { environment.pipeline.submit(stale.map { .consumed(id, inboxId: $0) }, receipt: nil) }
        do {
            try take(.restart(environment.timing), cause: .tick)
        } catch {
            logger.error("taking the session over failed", metadata: ["error": .loggable(error)])
        }
        // A store that refuses now (a commit waiting on the old owner's locks, say) must not
        // leave members who are here counted as gone: refused connects are tried again.
        for connection in connections.values { connectAfterTakeover(connection.id) }
        do {
            try take(.advance, cause: .tick)
        } catch {
            logger.error("taking the session over failed", metadata: ["error": .loggable(error)])
        }
        rescheduleTimer()
        await drainInbox(waitingForRunning: true)
    }

    /// Applies (or, still a replica, forwards) the socket commands held while `promote` ran,
    /// in their order. A session let go closed their sockets: their clients send them again.
    private func applyHeldCommands() {
        guard let held = heldDuringTakeover else { return }
        heldDuringTakeover = nil
        guard !releasedFlag.load(ordering: .relaxed) else { return }
        for command in held where connections[command.connection] != nil {
            // Through the answer cache again: a client that reconnected meanwhile may have sent
            // the same id twice.
            receiveCommand(command.command, from: command.connection, user: command.user, replyId: command.replyId, relay: command.relay)
        }
    }

    /// Counts `connection`'s member connected again after a takeover; one the store refuses
    /// is tried again each second while its socket is open.
    func connectAfterTakeover(_ connection: ConnectionID) {
        guard let user = connections[connection]?.user, role == .owner else { return }
        do {
            try take(.command(.connect, by: user), cause: .command(.connect, by: user, connection: nil, relay: nil))
        } catch {
            guard error.code == .unavailable, !releasedFlag.load(ordering: .relaxed) else {
                logger.error("counting a socket after a takeover failed", metadata: ["error": .loggable(error)])
                return
            }
            connectsWaiting.insert(connection)
            scheduleDepartureRetry()
        }
    }

    /// Lets the session go from this node: its sockets close so their clients reconnect (to
    /// any node, resuming from their last `seq`), callers waiting on it get a clear error,
    /// and its lease, if this node holds it, is given back, so that another node (or this
    /// one, reading the session again) can take it over.
    func release(_ reason: String) {
        guard !releasedFlag.load(ordering: .acquiring) else { return }
        logger.warning("letting the session go", metadata: ["reason": "\(reason)"])
        // Before the flag, which every writer of it sets on this actor: once it is set the
        // registry may read the session again and take the lease for that, which this must
        // not give back.
        environment.cluster?.release(id)
        releasedFlag.store(true, ordering: .releasing)
        stopTimers()
        for (_, pending) in forwards {
            if case .rest(let continuation) = pending {
                continuation.resume(returning: .failure(Self.letGo))
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

/// A socket's command held while its session is taken over (`LiveSession.promote`).
struct HeldSocketCommand: Sendable {
    let command: Command
    let connection: ConnectionID
    let user: UserID
    let replyId: String?
    let relay: String?
}
