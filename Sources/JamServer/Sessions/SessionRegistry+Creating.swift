import JamCore
import JamProtocol

/// Creating sessions: checking a create request, taking the new session's lease and a join
/// code free on every node, and answering once the session is stored.
extension SessionRegistry {
    /// Creates a session hosted by `identity`; returns once it is stored. `code` is a join
    /// code the host chose (a profile whose app lets them), kept normalised; it is refused as a conflict
    /// while a session that has not ended holds it.
    package func create(by identity: Identity, _ request: CreateSessionRequest, code chosen: String? = nil) async throws(JamError) -> (LiveSession, SessionView) {
        try await create(try checked(request, by: identity), by: identity, code: chosen)
    }

    /// A new session's name, its host's name and its settings, read from a create request.
    package struct NewSession: Sendable {
        let displayName: String
        let name: String
        let settings: SessionSettings
    }

    /// Checks a create request without creating anything, so a refusal costs the caller
    /// nothing (no rate-limit token, no id).
    package func checked(_ request: CreateSessionRequest, by identity: Identity) throws(JamError) -> NewSession {
        let displayName = try Validate.displayName(request.displayName ?? identity.displayName)
        let name = try request.name.map { (value) throws(JamError) in
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            try Validate.text(trimmed, field: "name", max: Validate.maxSessionName)
            return trimmed
        } ?? "\(displayName)'s session"
        var settings = defaults.settings
        if let patch = request.settings {
            try patch.validate()
            settings = patch.applied(to: settings)
        }
        return NewSession(displayName: displayName, name: name, settings: settings)
    }

    /// Creates the session `new` describes (see `create(by:_:code:)`), under `id` when given
    /// (`KeyedSessionIDs`: it must be free, or a conflict is thrown), else a new one.
    package func create(
        _ new: NewSession, by identity: Identity, code chosen: String? = nil, id given: SessionID? = nil
    ) async throws(JamError) -> (LiveSession, SessionView) {
        let (displayName, name, settings) = (new.displayName, new.name, new.settings)
        let now = clock.now()
        let environment = self.environment
        // Its first answer waits through an outage that begins later; none begins with one.
        if environment.pipeline.isStalled { throw Self.notCreated }
        let id = given ?? environment.ids.next()
        if let cluster, await cluster.tryLock([id]).isEmpty {
            // With the database there, a keyed id's lease is held by a node creating (or
            // serving) the session the same key made.
            if given != nil, await cluster.isConnectedOnceTried() { throw Self.createInProgress }
            throw JamError(.unavailable, "the database is unreachable; try again")
        }
        let reserved: String?
        let chosenKey: String?
        do throws(JamError) {
            chosenKey = try chosen.map(JoinCodes.chosen)
            if let chosenKey {
                if cluster != nil, try await sharedEntry(code: chosenKey).map({ !$0.ended }) == true { throw Self.codeTaken(chosenKey) }
            }
            reserved = cluster == nil || chosenKey != nil ? nil : try await codeFreeOnEveryNode(for: id)
        } catch {
            // The lease of a session never made would hold a slot of the database's lock table.
            cluster?.release(id)
            throw error
        }
        // Again: the store may have failed while this waited on the database.
        if environment.pipeline.isStalled {
            cluster?.release(id)
            if let reserved { index.withLock { $0.codes[reserved] = nil } }
            throw Self.notCreated
        }
        var noCodeLeft = false
        var idTaken = false
        let created = index.withLock { index -> LiveSession? in
            // A create with the same idempotency key got here first.
            if index.entries[id] != nil {
                idTaken = true
                return nil
            }
            if let chosenKey, isHeld(chosenKey, in: &index, databaseSaysFree: cluster != nil) { return nil }
            guard let code = chosenKey ?? reserved ?? Self.uniqueCode(defaults.codes, in: index) else {
                noCodeLeft = true
                return nil
            }
            let state = SessionState(
                id: id, joinCode: code, name: name, creator: identity.userId, creatorName: displayName, settings: settings,
                timing: environment.timing, rules: defaults.rules, now: now)
            // The library as of now, under the lock a rescan swaps it under: the copy taken
            // before the waits above may be a scan behind, and the rescan would not reach a
            // session it did not find here.
            var current = environment
            current.library = index.library
            let session = LiveSession.create(state: state, wire: defaults.makeWire(state.epoch), environment: current, eventLoop: loops.next())
            index.entries[id] = .live(session)
            index.codes[code] = id
            index.codeIssuedAt[code] = now
            return session
        }
        guard let session = created else {
            if let reserved { index.withLock { $0.codes[reserved] = nil } }
            // Not the lease: the session holding the id keeps it.
            if !idTaken { cluster?.release(id) }
            if idTaken { throw Self.createInProgress }
            throw noCodeLeft ? Self.noCodeLeft : Self.codeTaken(chosenKey ?? "")
        }
        // The lease connection broke while this waited on the database, and `leasesLost` only
        // lets go of the sessions published before it: take the lease again, or let the new
        // session go (its first answer then says so) rather than serve it with no lease.
        if let cluster, !cluster.holds(id), await cluster.tryLock([id]).isEmpty {
            await session.release("this server lost its database connection while creating the session")
        }
        Metrics.liveSessions.record(liveCount)
        let user = identity.userId
        return (session, try await session.readAfterOwnChange { state, _ in state.view(for: user) })
    }

    /// The session made by an earlier create with the same id (an idempotency key's), or nil
    /// when there is none; one that ended is gone (410).
    package func madeBefore(_ id: SessionID) async throws(JamError) -> LiveSession? {
        do {
            return try await session(id)
        } catch {
            guard error.code == .notFound else { throw error }
            return nil
        }
    }

    static let createInProgress = JamError(
        .conflict, "a create with this \(IdempotencyKey.header) is still under way; send it again once that one is answered")

    static let notCreated = JamError(.unavailable, "the database is not taking writes; no session was created, try again")
}
