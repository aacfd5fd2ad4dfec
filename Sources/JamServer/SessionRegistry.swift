import Foundation
import JamCore
import JamProtocol
import Logging

/// All live sessions, by ID and by join code.
public actor SessionRegistry {
    private var sessions: [SessionID: LiveSession] = [:]
    private var codes: [String: SessionID] = [:]
    private var ended: Set<SessionID> = []
    /// When each live code was issued, for profiles whose codes expire.
    private var codeIssuedAt: [String: Millis] = [:]
    private var environment: SessionEnvironment
    private let ids: any IDGenerator
    private let timing: Timing
    private let defaults: SessionDefaults

    init(environment: SessionEnvironment, timing: Timing, defaults: SessionDefaults) {
        self.environment = environment
        self.ids = environment.ids
        self.timing = timing
        self.defaults = defaults
    }

    /// Brings back every stored session; live ones continue their timeline from now.
    func load(from store: any SessionStore) async throws {
        let rows = try await store.loadAll()
        let decoder = JSONDecoder()
        var restored: [LiveSession] = []
        for row in rows {
            if row.ended {
                ended.insert(row.id)
                continue
            }
            var state: SessionState
            do {
                state = try decoder.decode(SessionState.self, from: Data(row.state))
            } catch {
                environment.logger.error("a stored session could not be read; it stays in the store untouched", metadata: ["session.id": "\(row.id)", "error": "\(error)"])
                continue
            }
            state.resetConnections()
            state.timing = timing
            let session = LiveSession(state: state, stored: true, wire: defaults.makeWire(state.epoch), environment: environment)
            sessions[state.id] = session
            codes[state.joinCode] = state.id
            codeIssuedAt[state.joinCode] = state.createdAt
            restored.append(session)
        }
        Metrics.liveSessions.record(sessions.count)
        // Catch up: what should have happened while the server was down happens now.
        for session in restored {
            await session.releaseMembersWithoutSockets()
            await session.tick()
        }
        environment.logger.info("sessions restored", metadata: ["sessions.live": "\(restored.count)", "sessions.ended": "\(ended.count)"])
    }

    /// A rescan changed the library: new sessions and live ones shuffle the new tracks.
    func libraryChanged(_ tracks: [Track]) async {
        environment.fallbackTracks = tracks
        for session in sessions.values { await session.useFallbackTracks(tracks) }
    }

    /// Number of live sessions.
    var liveCount: Int {
        prune()
        return sessions.count
    }

    /// Creates a session hosted by `identity`; returns once it is stored.
    func create(by identity: Identity, _ request: CreateSessionRequest) async throws(JamError) -> (LiveSession, SessionView) {
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
        let now = environment.clock.now()
        let state = SessionState(
            id: environment.ids.next(), joinCode: uniqueCode(), name: name, creator: identity.userId,
            creatorName: displayName, settings: settings, timing: timing, rules: defaults.rules, now: now)
        let session = LiveSession(state: state, stored: false, wire: defaults.makeWire(state.epoch), environment: environment)
        sessions[state.id] = session
        codes[state.joinCode] = state.id
        codeIssuedAt[state.joinCode] = now
        Metrics.liveSessions.record(sessions.count)
        await session.waitUntilStored()
        return (session, try await session.view(for: identity.userId))
    }

    /// The live session `id`: 404 when unknown, 410 when it has ended.
    func session(_ id: SessionID) throws(JamError) -> LiveSession {
        if let session = sessions[id] {
            guard session.hasEnded else { return session }
            forget(id)
        }
        if ended.contains(id) { throw JamError(.gone, "the session has ended") }
        throw JamError(.notFound, "no session \(id)")
    }

    /// The live session whose join code is `code`.
    func session(code input: String) throws(JamError) -> LiveSession {
        let code = JoinCodes.normalise(input)
        guard !code.isEmpty else { throw JamError(.invalidField, "code must not be empty") }
        guard code.count <= 32 else { throw JamError(.invalidField, "code is too long") }
        guard let id = codes[code] else { throw JamError(.notFound, "no session with code \(code)") }
        if let lifetime = defaults.codeLifetimeMs, let issued = codeIssuedAt[code], environment.clock.now() - issued > lifetime {
            throw JamError(.gone, "the join code \(code) has expired")
        }
        return try session(id)
    }

    /// Applies `commands` together, with a fresh join code when `newCode` is set.
    func perform(_ commands: [Command], on session: LiveSession, newCode: Bool, by user: UserID) async throws(JamError) {
        var steps = commands
        var code: String?
        if newCode {
            let fresh = uniqueCode()
            codes[fresh] = session.id
            codeIssuedAt[fresh] = environment.clock.now()
            steps.append(.setJoinCode(fresh))
            code = fresh
        }
        guard !steps.isEmpty else { return }
        do {
            try await session.perform(.all(steps), by: user)
        } catch {
            if let code { codes[code] = nil }
            throw error
        }
        if let code {
            for (old, owner) in codes where owner == session.id && old != code {
                codes[old] = nil
                codeIssuedAt[old] = nil
            }
        }
    }

    /// A fresh ID for an item or a session.
    nonisolated func newID() -> JamID { ids.next() }

    private func uniqueCode() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let code = defaults.codes.make(using: &generator)
            if codes[code] == nil { return code }
        }
    }

    private func forget(_ id: SessionID) {
        sessions[id] = nil
        ended.insert(id)
        for (code, owner) in codes where owner == id {
            codes[code] = nil
            codeIssuedAt[code] = nil
        }
        Metrics.liveSessions.record(sessions.count)
    }

    private func prune() {
        for (id, session) in sessions where session.hasEnded { forget(id) }
    }
}
