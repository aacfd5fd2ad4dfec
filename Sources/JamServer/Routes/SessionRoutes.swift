import Hummingbird
import JamCore
import JamProtocol

/// The REST surface of sessions: the same operations as the socket, for callers without one.
struct SessionRoutes {
    let registry: SessionRegistry
    let limiter: RateLimiter
    let limits: RateLimits?

    func register(on router: Router<JamRequestContext>) {
        let sessions = router.group("api/v1/sessions")

        sessions.post { request, context in
            let identity = try context.requireIdentity()
            // Checked before the limit: a refused request spends none of it.
            let body = try await RouteHelpers.body(CreateSessionRequest.self, from: request, context: context)
            let new = try registry.checked(body, by: identity)
            if let limits {
                try await limiter.check([
                    ("create:\(identity.userId)", limits.createSession),
                    ("create-address:\(RouteHelpers.clientAddress(context))", limits.createSessionPerAddress),
                ])
            }
            let (_, view) = try await registry.create(new, by: identity)
            return try RouteHelpers.json(view, status: .created)
        }

        sessions.post("join") { request, context in
            let identity = try context.requireIdentity()
            if let limits { try await limiter.check("join:\(RouteHelpers.clientAddress(context))", limit: limits.join) }
            let body = try await RouteHelpers.body(JoinSessionRequest.self, from: request, context: context)
            let session = try await registry.session(code: body.code)
            return try RouteHelpers.json(try await session.performViewing(.join(displayName: body.displayName ?? identity.displayName), by: identity.userId).view)
        }

        sessions.get(":id") { _, context in
            let (session, identity) = try await resolve(context)
            return try RouteHelpers.json(try await session.view(for: identity.userId))
        }

        sessions.patch(":id") { request, context in
            let (session, identity) = try await resolve(context)
            let body = try await RouteHelpers.body(UpdateSessionRequest.self, from: request, context: context)
            try body.validate()
            var commands: [Command] = []
            if let settings = body.settings { commands.append(.updateSettings(settings)) }
            switch body.playback {
            case .play: commands.append(.play)
            case .pause: commands.append(.pause)
            case .resume: commands.append(.resume)
            case nil: break
            }
            if let seekMs = body.seekMs { commands.append(.seek(positionMs: seekMs)) }
            return try RouteHelpers.json(try await registry.perform(commands, on: session, newCode: body.regenerateJoinCode == true, by: identity.userId))
        }

        sessions.delete(":id") { _, context in
            let (session, identity) = try await resolve(context)
            try await session.perform(.end, by: identity.userId)
            return Response(status: .noContent)
        }

        sessions.post(":id/leave") { _, context in
            let (session, identity) = try await resolve(context)
            try await session.perform(.leave, by: identity.userId)
            return Response(status: .noContent)
        }

        sessions.post(":id/queue") { request, context in
            let (session, identity) = try await resolve(context)
            let body = try await RouteHelpers.body(AddToQueueRequest.self, from: request, context: context)
            try body.track.validate()
            try Validate.nonce(body.nonce)
            let (outcome, view) = try await session.performViewing(.add(track: body.track, nonce: body.nonce, itemId: registry.newID()), by: identity.userId)
            guard let itemId = outcome.itemId else { throw JamError(.internal, "the add produced no item") }
            let item = view.queue.first { $0.id == itemId } ?? view.nowPlaying.map(\.item).flatMap { $0.id == itemId ? $0 : nil }
                ?? view.upNext.map(\.item).flatMap { $0.id == itemId ? $0 : nil }
            guard let item else {
                // A repeated nonce whose item has since played or been removed.
                return try RouteHelpers.json(["itemId": itemId.rawValue], status: .ok)
            }
            return try RouteHelpers.json(item, status: outcome.events.isEmpty ? .ok : .created)
        }

        sessions.delete(":id/queue/:itemId") { _, context in
            let (session, identity) = try await resolve(context)
            let itemId = try RouteHelpers.uuid("itemId", in: context, label: "itemId")
            try await session.perform(.remove(itemId: itemId), by: identity.userId)
            return Response(status: .noContent)
        }

        sessions.put(":id/queue/:itemId/vote") { request, context in
            let (session, identity) = try await resolve(context)
            let itemId = try RouteHelpers.uuid("itemId", in: context, label: "itemId")
            let body = try await RouteHelpers.body(VoteRequest.self, from: request, context: context)
            try Validate.vote(body.value)
            let outcome = try await session.perform(.vote(itemId: itemId, value: body.value), by: identity.userId)
            return try RouteHelpers.json(VoteResponse(itemId: itemId, score: outcome.score ?? 0, myVote: body.value))
        }

        sessions.delete(":id/queue/:itemId/vote") { _, context in
            let (session, identity) = try await resolve(context)
            let itemId = try RouteHelpers.uuid("itemId", in: context, label: "itemId")
            let outcome = try await session.perform(.vote(itemId: itemId, value: 0), by: identity.userId)
            return try RouteHelpers.json(VoteResponse(itemId: itemId, score: outcome.score ?? 0, myVote: 0))
        }

        sessions.post(":id/skip") { _, context in
            let (session, identity) = try await resolve(context)
            return try RouteHelpers.json(try await session.performViewing(.skip, by: identity.userId).view)
        }

        sessions.post(":id/skip-requests") { _, context in
            let (session, identity) = try await resolve(context)
            return try RouteHelpers.json(try await session.performViewing(.requestSkip, by: identity.userId).view.skipRequests)
        }

        sessions.put(":id/members/:userId/role") { request, context in
            let (session, identity) = try await resolve(context)
            let target = try RouteHelpers.uuid("userId", in: context, label: "userId")
            let body = try await RouteHelpers.body(RoleRequest.self, from: request, context: context)
            let view = try await session.performViewing(.setRole(userId: target, role: body.role), by: identity.userId).view
            guard let member = view.members.first(where: { $0.userId == target }) else { throw JamError(.notFound, "no member \(target)") }
            return try RouteHelpers.json(member)
        }

        sessions.delete(":id/members/:userId") { _, context in
            let (session, identity) = try await resolve(context)
            let target = try RouteHelpers.uuid("userId", in: context, label: "userId")
            try await session.perform(.kick(userId: target), by: identity.userId)
            return Response(status: .noContent)
        }
    }

    /// The caller (401 first) and the session named in the path.
    private func resolve(_ context: JamRequestContext) async throws -> (LiveSession, Identity) {
        let identity = try context.requireIdentity()
        let id = try RouteHelpers.uuid("id", in: context, label: "session id")
        return (try await registry.session(id), identity)
    }
}
