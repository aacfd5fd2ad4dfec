import JamCore
import JamProtocol
import JamServer
import Logging
import ServiceLifecycle
import Synchronization

/// Each user's current session, as QueueIT's `users.current_session`: the one session a user
/// is a member of through this profile (creating or joining another leaves the old one).
///
/// Membership itself is stored with the sessions; this index over it lives in memory and is
/// rebuilt from them at start (`CurrentSessionsService`). Until then lookups wait.
final class CurrentSessions: Sendable {
    private struct State {
        var byUser: [UserID: SessionID] = [:]
        var ready = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// The user's current session, once the index is rebuilt.
    func current(_ user: UserID) async -> SessionID? {
        await waitUntilReady()
        return state.withLock { $0.byUser[user] }
    }

    /// Makes `session` the user's current one.
    func set(_ user: UserID, _ session: SessionID) {
        state.withLock { $0.byUser[user] = session }
    }

    /// The user has no current session (only if it still is `session`, when given).
    func clear(_ user: UserID, ifIn session: SessionID? = nil) {
        state.withLock { state in
            if let session, state.byUser[user] != session { return }
            state.byUser[user] = nil
        }
    }

    /// A session's events: a member who left (kicked, or dropped after a long absence) has
    /// no current session any more.
    func observe(_ events: [ServerEnvelope], in session: SessionID) {
        for envelope in events {
            if case .memberLeft(let left) = envelope.event { clear(left.userId, ifIn: session) }
        }
    }

    /// Adds what the stored sessions say, keeping any newer entry, and lets lookups go ahead.
    func finishRebuild(_ found: [UserID: (session: SessionID, joinedAt: Millis)]) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            for (user, entry) in found where state.byUser[user] == nil { state.byUser[user] = entry.session }
            state.ready = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func waitUntilReady() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.ready { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// Rebuilds `CurrentSessions` from every stored session at start, then waits for shutdown.
struct CurrentSessionsService: Service {
    let index: CurrentSessions
    let registry: SessionRegistry
    let logger: Logger

    func run() async throws {
        var found: [UserID: (session: SessionID, joinedAt: Millis)] = [:]
        var unreadable = 0
        for id in registry.unendedSessionIDs {
            let members: [MemberRecord]
            do {
                let session = try await registry.session(id)
                members = await session.snapshot.members
            } catch {
                unreadable += 1
                logger.warning("a session could not be read for the member index", metadata: ["session.id": "\(id)", "error": .loggable(error)])
                continue
            }
            for member in members where (found[member.userId]?.joinedAt ?? .min) < member.joinedAt {
                found[member.userId] = (id, member.joinedAt)
            }
        }
        index.finishRebuild(found)
        logger.info("member index rebuilt", metadata: ["users": "\(found.count)", "sessions.unreadable": "\(unreadable)"])
        try await gracefulShutdown()
    }
}
