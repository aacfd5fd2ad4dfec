import Hummingbird
import JamCore
import JamProtocol

/// The REST surface of sessions: the same operations as the socket, for callers without one.
struct SessionRoutes {
    let registry: SessionRegistry
    let limiter: RateLimiter
    let limits: RateLimits?
    /// The ids of sessions created under an idempotency key.
    let keyedIDs: KeyedSessionIDs

    func register(on router: Router<JamRequestContext>) {
        let sessions = router.group("api/v1/sessions")

        sessions.post { request, context in
            let identity = try context.requireIdentity()
            // Checked before the limit: a refused request spends none of it.
            let key = try RouteHelpers.idempotencyKey(request)
            let body = try await RouteHelpers.body(CreateSessionRequest.self, from: request, context: context)
            let new = try registry.checked(body, by: identity)
            let keyedID = key.map { keyedIDs.id(for: identity.userId, key: $0) }
            if let keyedID, let made = try await registry.madeBefore(keyedID) {
                // Sent again: the session the first create made, as its creator sees it now.
                return try RouteHelpers.json(try await made.view(for: identity.userId), status: .created, replayed: true)
            }
            if let limits {
                try await limiter.check([
                    ("create:\(identity.userId)", limits.createSession),
                    ("create-address:\(RouteHelpers.clientAddress(context))", limits.createSessionPerAddress),
                ])
            }
            let (_, view) = try await registry.create(new, by: identity, id: keyedID)
            return try RouteHelpers.json(view, status: .created)
        }

        sessions.post("join") { request, context in
            let identity = try context.requireIdentity()
            // Checked before the limit: a refused key, body, code or name spends none of it. A
            // well-formed code no session holds does: that is what the limit is against. A code
            // none of this server's codes could be (an O typed for a 0) is no guess, and spends
            // none either; it is looked up all the same, as a data folder may hold sessions whose
            // codes another profile chose.
            let key = try RouteHelpers.idempotencyKey(request)
            let body = try await RouteHelpers.body(JoinSessionRequest.self, from: request, context: context)
            let code = try JoinCodes.read(body.code)
            if let name = body.displayName { _ = try Validate.displayName(name) }
            let codes = registry.defaults.codes
            let possible = codes.couldMake(code)
            if possible, let limits { try await limiter.check("join:\(RouteHelpers.clientAddress(context))", limit: limits.join) }
            let session: LiveSession
            do {
                session = try await registry.session(code: body.code)
            } catch let error as JamError where !possible && error.code == .notFound {
                throw JamError(.invalidField, "code cannot be a join code here: \(codes.shape)")
            }
            let done = try await session.performViewing(.join(displayName: body.displayName ?? identity.displayName), by: identity.userId, key: key)
            return try RouteHelpers.json(done)
        }

        sessions.get(":id") { _, context in
            let (session, identity) = try await resolve(context)
            return try RouteHelpers.json(try await session.view(for: identity.userId))
        }

        sessions.patch(":id") { request, context in
            let (session, identity) = try await resolve(context)
            let key = try RouteHelpers.idempotencyKey(request)
            let epoch = try RouteHelpers.epoch(request)
            let body = try await RouteHelpers.body(UpdateSessionRequest.self, from: request, context: context)
            try body.validate()
            if epoch != nil, body.playback != .pause, body.playback != .resume, body.seekMs == nil {
                throw JamError(.invalidField, "epoch names the song a pause, resume or seek is for; this update has none")
            }
            var commands: [Command] = []
            if let settings = body.settings { commands.append(.updateSettings(settings)) }
            switch body.playback {
            case .play: commands.append(.play)
            case .pause: commands.append(Command.pause.checked(whileCurrent: epoch))
            case .resume: commands.append(Command.resume.checked(whileCurrent: epoch))
            case nil: break
            }
            if let seekMs = body.seekMs { commands.append(Command.seek(positionMs: seekMs).checked(whileCurrent: epoch)) }
            return try RouteHelpers.json(try await registry.perform(commands, on: session, newCode: body.regenerateJoinCode == true, by: identity.userId, key: key))
        }

        sessions.delete(":id") { request, context in
            let (session, identity) = try await resolve(context)
            return try await noContent(after: .end, on: session, by: identity, key: RouteHelpers.idempotencyKey(request))
        }

        sessions.post(":id/leave") { request, context in
            let (session, identity) = try await resolve(context)
            return try await noContent(after: .leave, on: session, by: identity, key: RouteHelpers.idempotencyKey(request))
        }

        sessions.post(":id/queue") { request, context in
            let (session, identity) = try await resolve(context)
            let key = try RouteHelpers.idempotencyKey(request)
            let body = try await RouteHelpers.body(AddToQueueRequest.self, from: request, context: context)
            try body.track.validate()
            try Validate.nonce(body.nonce)
            let done = try await session.performViewing(.add(track: body.track, nonce: body.nonce, itemId: registry.newID()), by: identity.userId, key: key)
            let (outcome, view) = (done.outcome, done.read)
            guard let itemId = outcome.itemId else { throw JamError(.internal, "the add produced no item") }
            let item = view.queue.first { $0.id == itemId } ?? view.nowPlaying.map(\.item).flatMap { $0.id == itemId ? $0 : nil }
                ?? view.upNext.map(\.item).flatMap { $0.id == itemId ? $0 : nil }
            guard let item else {
                // A repeated nonce (or key) whose item has since played or been removed.
                return try RouteHelpers.json(["itemId": itemId.rawValue], status: .ok, replayed: done.replayed)
            }
            return try RouteHelpers.json(item, status: outcome.events.isEmpty ? .ok : .created, replayed: done.replayed)
        }

        sessions.delete(":id/queue/:itemId") { request, context in
            let (session, identity) = try await resolve(context)
            let itemId = try RouteHelpers.itemID(in: context)
            return try await noContent(after: .remove(itemId: itemId), on: session, by: identity, key: RouteHelpers.idempotencyKey(request))
        }

        sessions.put(":id/queue/:itemId/vote") { request, context in
            let (session, identity) = try await resolve(context)
            let itemId = try RouteHelpers.itemID(in: context)
            let key = try RouteHelpers.idempotencyKey(request)
            let body = try await RouteHelpers.body(VoteRequest.self, from: request, context: context)
            try Validate.vote(body.value)
            return try await vote(body.value, on: itemId, in: session, by: identity, key: key)
        }

        sessions.delete(":id/queue/:itemId/vote") { request, context in
            let (session, identity) = try await resolve(context)
            let itemId = try RouteHelpers.itemID(in: context)
            return try await vote(0, on: itemId, in: session, by: identity, key: RouteHelpers.idempotencyKey(request))
        }

        sessions.post(":id/skip") { request, context in
            let (session, identity) = try await resolve(context)
            let skip = Command.skip.checked(whileCurrent: try RouteHelpers.epoch(request))
            return try RouteHelpers.json(try await session.performViewing(skip, by: identity.userId, key: RouteHelpers.idempotencyKey(request)))
        }

        sessions.post(":id/skip-requests") { request, context in
            let (session, identity) = try await resolve(context)
            let ask = Command.requestSkip.checked(whileCurrent: try RouteHelpers.epoch(request))
            let done = try await session.performViewing(ask, by: identity.userId, key: RouteHelpers.idempotencyKey(request))
            return try RouteHelpers.json(done.read.skipRequests, replayed: done.replayed)
        }

        // The caller's own request, taken back: the collection's other requests are not theirs
        // to remove, as `DELETE …/vote` clears only the caller's vote.
        sessions.delete(":id/skip-requests") { request, context in
            let (session, identity) = try await resolve(context)
            let key = try RouteHelpers.idempotencyKey(request)
            let withdrawal = Command.withdrawSkipRequest.checked(whileCurrent: try RouteHelpers.epoch(request))
            let done = try await session.performViewing(withdrawal, by: identity.userId, key: key)
            return try RouteHelpers.json(done.read.skipRequests, replayed: done.replayed)
        }

        sessions.put(":id/members/:userId/role") { request, context in
            let (session, identity) = try await resolve(context)
            let target = try RouteHelpers.uuid("userId", in: context, label: "userId")
            let key = try RouteHelpers.idempotencyKey(request)
            let body = try await RouteHelpers.body(RoleRequest.self, from: request, context: context)
            let done = try await session.performViewing(.setRole(userId: target, role: body.role), by: identity.userId, key: key)
            guard let member = done.read.members.first(where: { $0.userId == target }) else { throw JamError(.notFound, "no member \(target)") }
            return try RouteHelpers.json(member, replayed: done.replayed)
        }

        sessions.delete(":id/members/:userId") { request, context in
            let (session, identity) = try await resolve(context)
            let target = try RouteHelpers.uuid("userId", in: context, label: "userId")
            return try await noContent(after: .kick(userId: target), on: session, by: identity, key: RouteHelpers.idempotencyKey(request))
        }
    }

    /// Sets the caller's vote on `itemId` (0 takes it back), once per idempotency `key`.
    private func vote(_ value: Int, on itemId: JamID, in session: LiveSession, by identity: Identity, key: IdempotencyKey?) async throws -> Response {
        let done = try await session.perform(.vote(itemId: itemId, value: value), by: identity.userId, key: key) { _, _ in () }
        return try RouteHelpers.json(VoteResponse(itemId: itemId, score: done.outcome.score ?? 0, myVote: value), replayed: done.replayed)
    }

    /// Applies `command` once per idempotency `key` and answers 204.
    private func noContent(after command: Command, on session: LiveSession, by identity: Identity, key: IdempotencyKey?) async throws -> Response {
        let done = try await session.perform(command, by: identity.userId, key: key) { _, _ in () }
        return RouteHelpers.marking(Response(status: .noContent), replayed: done.replayed)
    }

    /// The caller (401 first) and the session named in the path.
    private func resolve(_ context: JamRequestContext) async throws -> (LiveSession, Identity) {
        let identity = try context.requireIdentity()
        let id = try RouteHelpers.uuid("id", in: context, label: "session id")
        return (try await registry.session(id), identity)
    }
}
