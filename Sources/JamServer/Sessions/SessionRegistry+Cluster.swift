import JamProtocol

// Several nodes on one database: what the node's notifications and lease polls do to the
// sessions this node runs.
extension SessionRegistry: ClusterEvents {
    /// The stored index row of a session another node may have created.
    func sharedEntry(_ id: SessionID) async throws(JamError) -> StoredSessionEntry? {
        guard let cluster else { return nil }
        return try await cluster.withDatabase { try await cluster.store.entry(id) }
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

    func logMoved(_ session: SessionID, to lsn: Int64) async {
        await live(session)?.catchUp(to: lsn)
    }

    func inboxFilled(_ session: SessionID) async {
        await live(session)?.drainInbox()
    }

    func replied(_ reply: ForwardReply) async {
        await live(reply.session)?.replied(reply)
    }

    func pollLeases() async {
        guard let cluster else { return }
        var replicas: [SessionID: LiveSession] = [:]
        for session in allLive where !session.hasEnded && !session.releasedFlag.load(ordering: .relaxed) {
            if await session.role == .replica { replicas[session.id] = session }
        }
        guard !replicas.isEmpty else { return }
        for id in await cluster.tryLock(Array(replicas.keys)) {
            let entry: StoredSessionEntry?
            do {
                entry = try await sharedEntry(id)
            } catch {
                logger.warning("reading a session taken over failed", metadata: ["session.id": "\(id)", "error": "\(error)"])
                entry = nil
            }
            await replicas[id]?.promote(entry: entry)
        }
    }

    func leasesLost() async {
        let sessions = index.withLock { index -> [LiveSession] in
            var sessions: [LiveSession] = []
            for (id, entry) in index.entries {
                guard case .live(let session) = entry else { continue }
                sessions.append(session)
                // Read again from the store when next asked for: another node may own it by then.
                index.entries[id] = nil
            }
            return sessions
        }
        for session in sessions { await session.release("this server lost its database connection") }
    }

    func resynchronize() async {
        for session in allLive {
            await session.catchUp(to: .max)
            await session.drainInbox()
        }
    }
}
