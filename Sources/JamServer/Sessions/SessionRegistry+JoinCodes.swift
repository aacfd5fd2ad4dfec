import JamCore
import JamProtocol

/// Join codes: finding a session by its code, handing out fresh ones, and keeping them unique
/// across the nodes that share a database.
extension SessionRegistry {
    /// The live session whose join code is `code`: 404 when no session has it, 410 when it
    /// has expired, and for a session that has ended whatever `whenEnded` makes of its 410.
    package func session(code input: String, whenEnded: (JamError) -> JamError = { $0 }) async throws(JamError) -> LiveSession {
        let code = try JoinCodes.read(input)
        // At most twice: once as this node remembers the code, once as the database has it.
        for _ in 0..<2 {
            let id = try await sessionID(code: code)
            let session: LiveSession
            do {
                session = try await self.session(id)
            } catch {
                // The session ended on another node, which may have given the code to a new one
                // this node has not heard of.
                guard cluster != nil, error.code == .gone || error.code == .notFound,
                      let entry = try await relearn(code, heldBy: id), entry.id != id
                else { throw error.code == .gone ? whenEnded(error) : error }
                continue
            }
            guard cluster != nil, await session.inspect({ state, _ in state.joinCode }) != code else { return session }
            // Another node gave the session a new code since this one learnt the old code (and
            // may have given the old one to another session), or this node's copy has not caught
            // up with a new one yet: the database says which.
            let entry = try await relearn(code, heldBy: id)
            if entry?.id == id { return session }
            if entry == nil { break }
        }
        throw JamError(.notFound, "no session with code \(code)")
    }

    /// The session, not ended, that the shared database says holds `code`, which this node
    /// took `id` to hold; this node's copy of the code follows the database's.
    private func relearn(_ code: String, heldBy id: SessionID) async throws(JamError) -> StoredSessionEntry? {
        let entry = try await sharedEntry(code: code)
        index.withLock { index in
            guard index.codes[code] == id else { return }
            if let entry {
                if index.entries[entry.id] == nil { index.entries[entry.id] = .stored(entry) }
                index.codes[code] = entry.id
                index.codeIssuedAt[code] = entry.codeIssuedAt
            } else {
                index.codes[code] = nil
                index.codeIssuedAt[code] = nil
            }
        }
        return entry
    }

    /// Whether a session that may not have ended holds `code`. The code of a session that
    /// ended is let go of here rather than at the next sweep, so it is free at once.
    /// `databaseSaysFree`: the shared database was just asked and no session that has not
    /// ended holds it there, so only this node's own sessions, which may be ahead of the
    /// database, still count; a copy of another node's (a replica not caught up with an end,
    /// one read from the database, or one let go of) is out of date.
    func isHeld(_ code: String, in index: inout Index, databaseSaysFree: Bool) -> Bool {
        guard let holder = index.codes[code] else { return false }
        switch index.entries[holder] {
        case .live(let session)? where session.hasEnded:
            forget(holder, in: &index)
            return false
        case .ended?:
            index.dropCodes(of: [holder])
            return false
        case .live(let session)?:
            guard databaseSaysFree, session.isReplica || session.releasedFlag.load(ordering: .acquiring) else { return true }
            index.dropCodes(of: [holder])
            return false
        case .stored?, .loading?, .unreadable?:
            guard databaseSaysFree else { return true }
            index.dropCodes(of: [holder])
            return false
        case nil:
            // Reserved for a session being created on this node.
            return true
        }
    }

    /// When `code` was given to its session, if a live one has it.
    package func codeIssuedAt(_ code: String) -> Millis? {
        index.withLock { $0.codeIssuedAt[code] }
    }

    /// The id of the session whose join code is `code` (read by `JoinCodes.read`): 404 when
    /// no session has it, 410 when it has expired.
    private func sessionID(code: String) async throws(JamError) -> SessionID {
        var (id, issued) = index.withLock { ($0.codes[code], $0.codeIssuedAt[code]) }
        if id == nil, cluster != nil, let entry = try await sharedEntry(code: code) {
            // A session another node created.
            index.withLock { index in
                if index.entries[entry.id] == nil { index.entries[entry.id] = .stored(entry) }
                index.codes[code] = entry.id
                index.codeIssuedAt[code] = entry.codeIssuedAt
            }
            (id, issued) = (entry.id, entry.codeIssuedAt)
        }
        guard let id else { throw JamError(.notFound, "no session with code \(code)") }
        if let lifetime = defaults.codeLifetimeMs, let issued, clock.now() - issued > lifetime {
            throw JamError(.gone, "the join code \(code) has expired")
        }
        return id
    }

    /// Applies `commands` together (once per idempotency `key`), with a fresh join code when
    /// `newCode` is set, and returns the session as `user` sees it after them, once stored.
    func perform(
        _ commands: [Command], on session: LiveSession, newCode: Bool, by user: UserID, key: IdempotencyKey? = nil
    ) async throws(JamError) -> Performed<SessionView> {
        guard newCode else {
            guard !commands.isEmpty else { return Performed(outcome: Outcome(), read: try await session.view(for: user), replayed: false) }
            return try await session.performViewing(.all(commands), by: user, key: key)
        }
        let found = index.withLock { index -> String? in
            guard let fresh = Self.uniqueCode(defaults.codes, in: index) else { return nil }
            index.codes[fresh] = session.id
            index.codeIssuedAt[fresh] = clock.now()
            index.codesBeingSet.insert(fresh)
            return fresh
        }
        guard let fresh = found else { throw Self.noCodeLeft }
        let result: Result<Performed<SessionView>, JamError>
        do {
            // A repeated key applies nothing, and the fresh code goes back below.
            result = .success(try await session.performViewing(.all(commands + [.setJoinCode(fresh)]), by: user, key: key))
        } catch {
            result = .failure(error)
        }
        await settleCodes(of: session, after: fresh)
        return try result.get()
    }

    /// Points the index at the join code `session` holds now and lets go of the others it
    /// gave the session, whatever the command setting `fresh` came to: a change can be
    /// applied and still fail (its commit unconfirmed, say), and two new codes asked for at
    /// once both apply, the later one winning. Read on the session's actor, so no change of
    /// code slips between the read and the index; codes still being set are kept.
    private func settleCodes(of session: LiveSession, after fresh: String) async {
        let now = clock.now()
        await session.inspect { state, _ in
            self.index.withLock { index in
                index.codesBeingSet.remove(fresh)
                for (code, owner) in index.codes where owner == session.id && code != state.joinCode && !index.codesBeingSet.contains(code) {
                    index.codes[code] = nil
                    index.codeIssuedAt[code] = nil
                }
                // Not for a session ended or let go meanwhile: its codes went with it.
                if index.codes[state.joinCode] == nil, !session.hasEnded, !session.releasedFlag.load(ordering: .acquiring) {
                    index.codes[state.joinCode] = session.id
                    index.codeIssuedAt[state.joinCode] = now
                }
            }
        }
    }

    static func codeTaken(_ code: String) -> JamError {
        JamError(.conflict, "the join code \(code) is already in use; choose another")
    }

    /// A join code no session on any node holds (other nodes' new codes are only in the
    /// database), reserved here for `id`.
    func codeFreeOnEveryNode(for id: SessionID) async throws(JamError) -> String? {
        for _ in 0..<5 {
            let found = index.withLock { index -> String? in
                guard let code = Self.uniqueCode(defaults.codes, in: index) else { return nil }
                index.codes[code] = id
                return code
            }
            guard let candidate = found else { throw Self.noCodeLeft }
            let holder: StoredSessionEntry?
            do {
                holder = try await sharedEntry(code: candidate)
            } catch {
                index.withLock { index in
                    if index.codes[candidate] == id { index.codes[candidate] = nil }
                }
                throw error
            }
            guard let holder else { return candidate }
            // Another node's session: known from the database, not reserved here.
            index.withLock { index in
                if index.entries[holder.id] == nil { index.entries[holder.id] = .stored(holder) }
                index.codes[candidate] = holder.id
            }
        }
        return nil
    }

    /// A code no session here holds; nil when all are held (PirateRadio's 9,000 can be).
    static func uniqueCode(_ codes: JoinCodes, in index: Index) -> String? {
        var generator = SystemRandomNumberGenerator()
        return codes.free(using: &generator) { index.codes[$0] != nil }
    }

    static let noCodeLeft = JamError(.unavailable, "every join code is in use; try again when sessions have ended", retryAfterMs: 60_000)
}
