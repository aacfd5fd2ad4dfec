import Foundation
import Hummingbird
import JamCore
import JamProtocol
import JamServer

/// QueueIT's `/api/v1/sessions/*`: create with a chosen code, join, current, leave, the
/// host's controls, skip requests and the host's "song finished".
struct QueueITSessionRoutes {
    let edge: QueueITEdge

    /// Its request model's join code: 4–20 characters; control characters are refused too.
    static func joinCode(_ body: inout QueueITBody) -> String? {
        body.text("join_code", min: 4, max: 20, what: "a join code")
    }

    /// The join code of a create or join body, or the 422 naming what is wrong with it.
    static func joinCode(of request: Request, context: JamRequestContext) async throws -> String {
        var body = try await QueueITBody.read(request, context: context)
        let code = joinCode(&body)
        return try body.validated(code)
    }

    /// A code OpenJam cannot match as people type it ("----": no letter or digit), said on the
    /// field as its validator's 422 would, which its app shows.
    static func unmatchable(_ code: String, _ reason: String) -> QueueITError {
        let input = String(decoding: JSONWriter.encode(JSONValue.string(code)), as: UTF8.self)
        return .validation([
            ValidationIssue(type: "value_error", loc: [.key("body"), .key("join_code")], msg: "Value error, \(reason)", input: input),
        ])
    }

    /// Its backend's per-user limit on joining (requests per minute).
    static let joinLimit = (count: 20, window: 60)

    func register(on router: Router<JamRequestContext>) {
        let sessions = router.group("api/v1/sessions")

        sessions.post("create") { request, context in
            let identity = try edge.identity(context)
            // Read first, as its backend validates before its limiter: a 422 spends nothing.
            let code = try await Self.joinCode(of: request, context: context)
            do throws(JamError) { _ = try JoinCodes.chosen(code) } catch { throw Self.unmatchable(code, error.message) }
            if let limits = edge.limits {
                // OpenJam's two create limits: guest tokens are free, so per user alone would
                // let one address open sessions as fast as it signs in.
                try await edge.limiter.check([
                    ("create:\(identity.userId)", limits.createSession),
                    ("create-address:\(RouteHelpers.clientAddress(context))", limits.createSessionPerAddress),
                ])
            }
            let session = try await edge.moves.inTurn(identity.userId) {
                let previous = try await edge.currentSession(of: identity.userId)
                let session: LiveSession
                do throws(JamError) {
                    (session, _) = try await edge.registry.create(by: identity, CreateSessionRequest(), code: code)
                } catch {
                    switch error.code {
                    case .conflict: throw QueueITError.codeInUse
                    case .invalidField: throw Self.unmatchable(code, error.message)
                    default: throw error
                    }
                }
                try await edge.moveIn(identity.userId, to: session, from: previous)
                return session
            }
            // Created: the answer waits for the store rather than refuse while it is down.
            return try QueueITEdge.json(try await session.readAfterOwnChange(QueueITEdge.current(for: identity.userId)))
        }

        sessions.post("join") { request, context in
            let identity = try edge.identity(context)
            // Read first, as its backend validates before its limiter: a 422 spends nothing.
            let code = try await Self.joinCode(of: request, context: context)
            if let limits = edge.limits {
                // Its backend's limit is per user, so a party on one network joins at once; the
                // address keeps a cap ten times OpenJam's own, against guessing codes.
                try await edge.limiter.check([
                    ("queueit-join:\(identity.userId)", Self.joinLimit),
                    ("join:\(RouteHelpers.clientAddress(context))", (limits.join.count * 10, limits.join.window)),
                ])
            }
            let session: LiveSession
            do throws(JamError) {
                session = try await edge.registry.session(code: code)
            } catch {
                switch error.code {
                case .notFound, .gone, .invalidField: throw QueueITError.sessionNotFound
                default: throw error
                }
            }
            let current = try await edge.moves.inTurn(identity.userId) {
                let previous = try await edge.currentSession(of: identity.userId)
                // The answer shows the session as the join left it: nothing after it that may not be stored yet.
                let current = try await session.perform(
                    .join(displayName: identity.displayName), by: identity.userId, budgeted: false, reading: QueueITEdge.current(for: identity.userId)
                ).read
                try await edge.moveIn(identity.userId, to: session, from: previous)
                return current
            }
            return try QueueITEdge.json(current)
        }

        sessions.get("current") { _, context in
            let identity = try edge.identity(context)
            let session = try await edge.requireCurrentSession(of: identity.userId)
            return try await edge.currentResponse(session, for: identity.userId)
        }

        sessions.post("leave") { _, context in
            let identity = try edge.identity(context)
            try await edge.leaveCurrentSession(identity.userId)
            return try QueueITEdge.json(QueueIT.OK())
        }

        sessions.patch("control_session") { request, context in
            let identity = try edge.identity(context)
            var body = try await QueueITBody.read(request, context: context)
            let locked = body.optionalBool("is_locked")
            let skip = body.optionalBool("skip_current_track")
            let pause = body.optionalBool("pause_playback")
            _ = try body.validated()
            let session = try await edge.requireCurrentSession(of: identity.userId)
            let state = try await edge.requireHost(identity.userId, of: session)
            var commands: [Command] = []
            if let locked = locked ?? nil, locked != state.settings.locked {
                commands.append(.updateSettings(SettingsPatch(locked: locked)))
            }
            if let pause = pause ?? nil, let current = state.current {
                if pause && current.state != .paused { commands.append(.pause) }
                if !pause && current.state == .paused { commands.append(.resume) }
            }
            if skip == true, state.current != nil { commands.append(.skip) }
            if !commands.isEmpty { try await session.perform(commands.count == 1 ? commands[0] : .all(commands), by: identity.userId, budgeted: false) }
            return try QueueITEdge.json(QueueIT.OK())
        }

        sessions.post("request_skip") { _, context in
            let identity = try edge.identity(context)
            let session = try await edge.requireCurrentSession(of: identity.userId)
            let counts: @Sendable (SessionState, any SessionWire) -> (requests: Int, members: Int) = { state, _ in
                (state.skipRequestCount, max(1, state.members.count))
            }
            var skipped = false
            let after: (requests: Int, members: Int)
            if await session.snapshot.current != nil {
                let (outcome, read) = try await session.perform(.requestSkip, by: identity.userId, budgeted: false, reading: counts)
                skipped = outcome.events.contains { envelope in
                    switch envelope.event {
                    case .playPrepare, .stopped: true
                    default: false
                    }
                }
                after = read
            } else {
                after = try await session.readStored(counts)
            }
            return try QueueITEdge.json(QueueIT.SkipResponse(skipRequestCount: after.requests, participantCount: after.members, skipped: skipped))
        }

        sessions.post("song_finished") { _, context in
            let identity = try edge.identity(context)
            let session = try await edge.requireCurrentSession(of: identity.userId)
            _ = try await edge.requireHost(identity.userId, of: session)
            try await session.perform(.finish, by: identity.userId, budgeted: false)
            return try QueueITEdge.json(QueueIT.OK())
        }
    }
}
