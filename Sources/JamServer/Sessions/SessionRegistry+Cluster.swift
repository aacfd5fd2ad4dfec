import JamProtocol

// Several nodes on one database: what the node's notifications and lease polls do to the
// sessions this node runs.
extension SessionRegistry: ClusterEvents {
    /// The stored index row of a session another node may have created.
    func sharedEntry(_ id: SessionID) async throws(JamError) -> StoredSessionEntry? {
        guard let cluster else { return nil }
        return try await cluster.withDatabase { try await cluster.store.entry(id) }
    }

    /// Sessions not ended: on several nodes the database's count (a node knows only the
    /// sessions it has loaded or looked up since it started), else this node's own.
    package func sessionsNotEnded() async -> Int {
        guard let cluster else { return liveCount }
        do {
            return try await cluster.withDatabase { try await cluster.store.sessionsNotEnded() }
        } catch {
            return liveCount
        }
    }

    /// The stored, not ended, session whose join code is `code`.
    func sharedEntry(code: String) async throws(JamError) -> StoredSessionEntry? {
        guard let cluster else { return nil }
        return try await cluster.withDatabase { try await cluster.store.entry(code: code) }
    }

    private func live(_ id: SessionID) -> LiveSession? {
        index.withLock { index in
            if case .live(let session)? = index.entries[id] { return session }
            return nil
        }
    }

    private var allLive: [LiveSession] {
        index.withLock { index in
            index.entries.values.compactMap { entry in
                if case .live(let session) = entry { return session }
                return nil
            }
        }
    }

    func logMoved(_ positions: [(SessionID, Int64)]) async {
        guard let cluster, !stopping.load(ordering: .acquiring) else { return }
        // The sessions this node follows and is behind on, read in one query.
        var behind: [(session: LiveSession, applied: Int64, wanted: Int64)] = []
        for (id, lsn) in positions {
            guard let session = live(id), let applied = await session.followedLsn, applied < lsn else { continue }
            behind.append((session, applied, lsn))
        }
        guard !behind.isEmpty else { return }
        let store = cluster.store
        let wanted = behind.map { ($0.session.id, $0.applied) }
        let records: [SessionID: [LogRecord]]
        do {
            records = try await cluster.withDatabase { try await store.records(after: wanted) }
        } catch {
            logger.warning("reading followed sessions' logs failed; each tries on its own", metadata: ["error": .loggable(error)])
            records = [:]
        }
        for entry in behind {
            await entry.session.follow(records[entry.session.id] ?? [], upTo: entry.wanted)
        }
    }

    func inboxFilled(_ sessions: [SessionID]) async {
        guard let cluster, !stopping.load(ordering: .acquiring) else { return }
        var owned: [LiveSession] = []
        for id in Set(sessions) {
            if let session = live(id), await session.role == .owner { owned.append(session) }
        }
        guard !owned.isEmpty else { return }
        let ids = owned.map(\.id)
        do {
            let commands = try await cluster.withDatabase { try await cluster.inbox(ids) }
            for session in owned { await session.takeInbox(commands[session.id] ?? []) }
        } catch {
            logger.warning("reading forwarded commands failed; each session tries on its own", metadata: ["error": .loggable(error)])
            for session in owned { await session.drainInbox() }
        }
    }

    func replied(_ reply: ForwardReply) async {
        await live(reply.session)?.replied(reply)
    }

    func pollLeases() async {
        guard let cluster, !stopping.load(ordering: .acquiring) else { return }
        var replicas: [SessionID: LiveSession] = [:]
        for session in allLive where !session.hasEnded && !session.releasedFlag.load(ordering: .relaxed) {
            if await session.retryFailedReads() == .replica { replicas[session.id] = session }
        }
        guard !replicas.isEmpty else { return }
        for id in await cluster.tryLock(Array(replicas.keys)) {
            let entry: StoredSessionEntry?
            do {
                entry = try await sharedEntry(id)
            } catch {
                logger.warning("reading a session taken over failed", metadata: ["session.id": "\(id)", "error": .loggable(error)])
                entry = nil
            }
            guard let replica = replicas[id] else { continue }
            await replica.promote(entry: entry)
            guard replica.isReplica || replica.releasedFlag.load(ordering: .acquiring) else { continue }
            // Not taken over (let go meanwhile, or its log not read to its end): kept, the lease
            // would keep every node from the session, unless this node is reading it again,
            // which takes the lease as its own.
            let takenAgain = index.withLock { index -> Bool in
                switch index.entries[id] {
                case .loading?: true
                case .live(let current)? where current !== replica: !current.isReplica && !current.releasedFlag.load(ordering: .acquiring)
                default: false
                }
            }
            if !takenAgain { cluster.release(id) }
        }
    }

    func leasesLost() async {
        let sessions = index.withLock { index -> [LiveSession] in
            var sessions: [LiveSession] = []
            for (id, entry) in index.entries {
                guard case .live(let session) = entry else { continue }
                sessions.append(session)
                // Read again from the store when next asked for: another node may own it by then,
                // or have ended it and given its code to another session.
                index.entries[id] = nil
            }
            index.dropCodes(of: Set(sessions.map(\.id)))
            return sessions
        }
        for session in sessions { await session.release("this server lost its database connection") }
    }

    func resynchronize() async {
        for session in allLive {
            await session.catchUpToEnd()
            await session.drainInbox()
        }
    }
}
