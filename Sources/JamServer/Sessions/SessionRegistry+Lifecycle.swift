import JamProtocol
import ServiceLifecycle

// The registry as a service: the store's index read at start, stored sessions brought back
// at their deadlines while the server runs, every live session's sockets closed at shutdown.
extension SessionRegistry {
    /// Reads the store's index: every stored session becomes findable; none is loaded yet.
    func loadIndex() async throws {
        let stored = try await store.loadIndex()
        let now = clock.now()
        // Where sockets are membership, every member of a stored session has left by now.
        let everyoneWakes = defaults.makeWire(0).socketsAreMembership
        var live = 0
        index.withLock { index in
            for entry in stored {
                if entry.ended {
                    index.entries[entry.id] = .ended
                    // Ended before purging existed (no purge time stored): the retention counts from now.
                    if let retention = baseEnvironment.endedRetentionMs { index.wakeUps.append((entry.wakeAt ?? now + retention, entry.id)) }
                    continue
                }
                live += 1
                index.entries[entry.id] = .stored(entry)
                index.codes[entry.joinCode] = entry.id
                index.codeIssuedAt[entry.joinCode] = entry.codeIssuedAt
                if everyoneWakes {
                    index.wakeUps.append((now, entry.id))
                } else if let wake = entry.wakeAt {
                    index.wakeUps.append((wake, entry.id))
                } else {
                    // No deadline stored: members were connected when the server died (a kill
                    // stores no disconnects), which holds off the unattended rules. Brought
                    // back now, its members count as gone since now and the rules run; left
                    // stored, it would never end or be purged. Those members are about to
                    // reconnect anyway.
                    index.wakeUps.append((now, entry.id))
                }
            }
            index.wakeUps.sort { $0.at < $1.at }
            index.lastDeadlineScan = now
        }
        Metrics.liveSessions.record(live)
        logger.info("session index read", metadata: ["sessions.stored": "\(live)", "sessions.ended": "\(stored.count - live)"])
    }

    /// Brings stored sessions back at their deadlines; at shutdown, closes every live one's sockets.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await wakeStoredSessions()
        } onGracefulShutdown: {}
        await shutdownSessions()
    }

    private func wakeStoredSessions() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let now = clock.now()
            sweepEnded(now: now)
            await scheduleUnservedDeadlines(now: now)
            let (due, next) = index.withLock { index -> ([SessionID], Millis?) in
                let split = index.wakeUps.firstIndex { $0.at > now } ?? index.wakeUps.count
                let due = index.wakeUps[..<split].map(\.id)
                index.wakeUps.removeFirst(split)
                return (due, index.wakeUps.first?.at)
            }
            // A few at a time: a restart with many due sessions must not starve the requests.
            await withTaskGroup(of: Void.self) { group in
                var pending = due[...]
                for _ in 0..<min(8, pending.count) {
                    let id = pending.removeFirst()
                    group.addTask { await self.wake(id) }
                }
                while await group.next() != nil, let id = pending.popFirst() {
                    group.addTask { await self.wake(id) }
                }
            }
            let wait = next.map { max(1, min($0 - clock.now(), 1_000)) } ?? 1_000
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(wait)) }
            } catch {
                return
            }
        }
    }

    /// Lets go of sessions that ended while in memory (every `endedSweepMs`), so neither they
    /// nor their ids stay for ever: each is purged once its retention is over.
    private func sweepEnded(now: Millis) {
        let ended = index.withLock { index -> Int in
            guard now - index.lastSweep >= baseEnvironment.endedSweepMs else { return 0 }
            index.lastSweep = now
            var count = 0
            for (id, entry) in index.entries {
                guard case .live(let session) = entry, session.hasEnded else { continue }
                forget(id, in: &index)
                count += 1
            }
            return count
        }
        if ended > 0 { logger.debug("ended sessions let go", metadata: ["sessions.ended": "\(ended)"]) }
    }

    /// On a node of several, every `deadlineScanMs`: schedules the stored sessions whose
    /// deadline has passed and that this node does not serve. Their owner may have stopped
    /// with nobody connected (nothing then takes them over), or they were made after this
    /// node read the index; a wake-up taken while another node owned them is not kept either.
    /// Whichever node takes the lease first brings each back (or purges it, once ended).
    private func scheduleUnservedDeadlines(now: Millis) async {
        guard let cluster,
            index.withLock({ index in
                guard now - index.lastDeadlineScan >= baseEnvironment.deadlineScanMs else { return false }
                index.lastDeadlineScan = now
                return true
            })
        else { return }
        let stored: [StoredSessionEntry]
        do {
            // With a time limit: a pool waits for ever on a database that is gone, and this
            // loop also brings the other sessions back and lets the server stop.
            let store = self.store
            stored = try await cluster.withDatabase(limit: .seconds(10)) { try await store.loadIndex() }
        } catch {
            logger.warning("the database's index could not be read for deadlines nobody serves", metadata: ["error": .loggable(error)])
            return
        }
        let scheduled = index.withLock { index -> Int in
            var count = 0
            for entry in stored {
                guard let wake = entry.wakeAt, wake <= now else { continue }
                // This node keeps ended sessions for good: it purges none, as at start.
                if entry.ended, baseEnvironment.endedRetentionMs == nil { continue }
                switch index.entries[entry.id] {
                case .live(let session)? where !session.releasedFlag.load(ordering: .acquiring):
                    // Served here: its own timers run it.
                    continue
                case .loading?, .unreadable?:
                    // Being read, or damaged.
                    continue
                case nil where entry.ended:
                    index.entries[entry.id] = .ended
                case .live?, .ended?, .stored?, nil:
                    // A session this node let go keeps its entry until asked for; reading it
                    // then takes the store's word again.
                    break
                }
                index.schedule(entry.id, at: wake)
                count += 1
            }
            return count
        }
        if scheduled > 0 { logger.debug("stored sessions past their deadline scheduled", metadata: ["sessions.due": "\(scheduled)"]) }
    }

    /// Removes an ended session's rows from the store and forgets it: its link answers 404 now.
    private func purge(_ id: SessionID) {
        baseEnvironment.pipeline.submit([.purge(id)], receipt: nil)
        index.withLock { _ = $0.entries.removeValue(forKey: id) }
        logger.info("ended session purged", metadata: ["session.id": "\(id)"])
    }

    private func wake(_ id: SessionID) async {
        if index.withLock({ index in if case .ended? = index.entries[id] { true } else { false } }) {
            purge(id)
            return
        }
        // A session another node owns wakes there; this node would only follow it.
        if let cluster, await cluster.tryLock([id]).isEmpty { return }
        do {
            _ = try await session(id)
        } catch {
            // Kept, the lease would keep every other node from a session this one does not serve.
            if let cluster, index.withLock({ index in if case .live? = index.entries[id] { false } else { true } }) { cluster.release(id) }
            logger.debug("a stored session was not brought back at its deadline", metadata: ["session.id": "\(id)", "error": .loggable(error)])
        }
    }

    private func shutdownSessions() async {
        stopping.store(true, ordering: .releasing)
        let live = index.withLock { index in
            index.entries.values.compactMap { entry -> LiveSession? in
                if case .live(let session) = entry { return session }
                return nil
            }
        }
        for session in live { await session.shutdown() }
        logger.info("sessions closed for the restart", metadata: ["sessions.live": "\(live.count)"])
    }
}
