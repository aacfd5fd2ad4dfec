import Foundation
import Hummingbird
import JamCore
import JamProtocol
import JamServer
import NIOCore

/// What every QueueIT route needs: who calls, their current session, and answers in its shapes.
struct QueueITEdge: Sendable {
    let registry: SessionRegistry
    let currentSessions: CurrentSessions
    let limiter: RateLimiter
    let limits: RateLimits?
    /// A user's moves between sessions (create, join, leave), one at a time: each reads the
    /// current session, waits on the store, then leaves it, and two at once (a double tap, an
    /// app's retry) would both leave the old session and both stay in their new ones.
    let moves = KeyedTurns<UserID>()

    /// The caller, from OpenJam's bearer token (it stands in for the app's Supabase token);
    /// 401 in its backend's words otherwise.
    func identity(_ context: JamRequestContext) throws -> Identity {
        switch context.authentication {
        case .user(let identity): return identity
        case .anonymous: throw QueueITError(.unauthorized, "Missing Authorization header")
        case .invalid(let error): throw QueueITError(.unauthorized, "Invalid token: \(error.message)")
        }
    }

    /// Holds the caller to one of its backend's per-user limits when limits are on. These
    /// replace OpenJam's command budget for QueueIT's routes (`perform(…, budgeted: false)`),
    /// so its app is refused exactly where its own backend would refuse it.
    func limit(_ name: String, _ user: UserID, _ limit: (count: Int, window: Int)) async throws {
        guard limits != nil else { return }
        try await limiter.check("queueit-\(name):\(user)", limit: limit)
    }

    /// The caller's current session, if they are still one of its members.
    func currentSession(of user: UserID) async throws -> LiveSession? {
        guard let id = await currentSessions.current(user) else { return nil }
        let session: LiveSession
        do throws(JamError) {
            session = try await registry.session(id)
        } catch {
            guard error.code == .notFound || error.code == .gone else { throw error }
            currentSessions.clear(user, ifIn: id)
            return nil
        }
        guard await session.snapshot.member(user) != nil else {
            currentSessions.clear(user, ifIn: id)
            return nil
        }
        return session
    }

    /// The current session, or `error` when there is none.
    func requireCurrentSession(of user: UserID, else error: QueueITError = .noActiveSession) async throws -> LiveSession {
        guard let session = try await currentSession(of: user) else { throw error }
        return session
    }

    /// The caller's session becomes `session`; the one they were in before, they leave. A
    /// leave the store does not take now does not undo the move: `session` exists or the
    /// caller is in it already, and a 503 would invite them to create or join it again.
    func moveIn(_ user: UserID, to session: LiveSession, from previous: LiveSession?) async throws {
        if let previous, previous.id != session.id {
            do {
                try await leave(user, previous)
            } catch let error as JamError where error.code == .unavailable {
                currentSessions.clear(user, ifIn: previous.id)
            }
        }
        currentSessions.set(user, session.id)
    }

    /// Leaves the caller's current session, if any, in the caller's turn of moves.
    func leaveCurrentSession(_ user: UserID) async throws {
        try await moves.inTurn(user) {
            if let session = try await currentSession(of: user) { try await leave(user, session) }
        }
    }

    /// Leaves `session`; having already left, or its having ended, is fine.
    func leave(_ user: UserID, _ session: LiveSession) async throws {
        do throws(JamError) {
            try await session.perform(.leave, by: user, budgeted: false)
        } catch {
            guard error.code == .notMember || error.code == .gone || error.code == .notFound else { throw error }
            // Already out: leaving is what was wanted.
        }
        currentSessions.clear(user, ifIn: session.id)
    }

    /// Fails unless the caller may use the host's controls.
    func requireHost(_ user: UserID, of session: LiveSession) async throws -> SessionState {
        let state = await session.snapshot
        guard state.member(user)?.role.hasHostControls == true else { throw QueueITError.notHost }
        return state
    }

    /// `CurrentSessionResponse` for the caller, once all of it is stored.
    func currentResponse(_ session: LiveSession, for user: UserID) async throws -> Response {
        try Self.json(try await session.readStored(Self.current(for: user)))
    }

    /// Reads the caller's `CurrentSessionResponse` from a session.
    static func current(for user: UserID) -> @Sendable (SessionState, any SessionWire) -> QueueIT.CurrentSession {
        { state, _ in QueueITViews.current(state, for: user) }
    }

    /// A JSON answer in its backend's encoding.
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: try QueueIT.encode(value))))
    }
}
