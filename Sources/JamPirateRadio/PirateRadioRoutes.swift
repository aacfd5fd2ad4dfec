import Foundation
import Hummingbird
import JamCore
import JamPirateRadioWire
import JamProtocol
import JamServer
import NIOCore
import Synchronization

/// The PirateRadio REST surface: `/health`, `/auth`, `/sessions`, `/sessions/join`,
/// `/sessions/join-by-id`, `/sessions/{id}`, `/stations` and `/admin/sessions`.
struct PirateRadioRoutes {
    let registry: SessionRegistry
    let tokens: PirateRadioTokens
    let clock: any ServerClock
    let limiter: RateLimiter
    let options: PirateRadioOptions
    let rateLimited: Bool
    let stations: PirateRadioStations

    /// `name` without control characters or characters that turn the direction of text (which
    /// OpenJam refuses in a name), trimmed and cut to OpenJam's display-name length; empty when
    /// nothing in it shows (OpenJam refuses such a name too).
    static func cleanDisplayName(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: name.unicodeScalars.filter { $0.properties.generalCategory != .control && !Validate.turnsDirection($0) })
        let trimmed = String(scalars).trimmingCharacters(in: .whitespacesAndNewlines)
        let cut = Validate.cut(trimmed, max: Validate.maxDisplayName).trimmingCharacters(in: .whitespacesAndNewlines)
        return cut.unicodeScalars.contains(where: Validate.shows) ? cut : ""
    }

    /// The name `/auth` signs for `userId`: the one given, cleaned; else the user id, cleaned;
    /// else "Listener". A token's name goes through it again (`PirateRadioTokens`), so one
    /// signed before names lost a character does not carry it on.
    static func displayName(given: String?, userId: String) -> String {
        let named = given.map(cleanDisplayName) ?? ""
        if !named.isEmpty { return named }
        let fromId = cleanDisplayName(userId)
        return fromId.isEmpty ? "Listener" : fromId
    }

    /// The session `id` a join or a read names: PirateRadio knows no "ended", and its server
    /// forgets a code with its session, so one that ended is not found. A store that cannot
    /// answer now is a 503 to try again, not a session that is gone.
    private static func session(_ id: SessionID, in registry: SessionRegistry) async throws -> LiveSession {
        do {
            return try await registry.session(id)
        } catch {
            guard error.code == .gone else { throw error }
            throw JamError(.notFound, "Session not found")
        }
    }

    /// The request's body as a JSON object; an empty body reads as `{}` and a body that is
    /// not an object as `{}` too, as the original's `req.body` does, but text that is not
    /// JSON is refused.
    private static func bodyObject(_ request: Request, _ context: JamRequestContext, naming wanted: String) async throws -> [String: Any] {
        let buffer = try await request.body.collect(upTo: context.maxBodyBytes)
        guard buffer.readableBytes > 0 else { return [:] }
        do {
            return try JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] ?? [:]
        } catch {
            throw JamError(.malformed, "the body must be JSON with \(wanted)")
        }
    }

    /// Answers as `/sessions/join` does: 409 when the session holds its most members, else
    /// the session's DJ and member count. The caller does not become a member here: as in
    /// PirateRadio's server, membership is an open socket, so they join when theirs connects
    /// (and one who never connects never fills a place).
    private func join(_ session: LiveSession) async throws -> Response {
        let state = await session.snapshot
        guard state.members.count < state.settings.maxMembers else { throw JamError(.sessionFull, "Session is full") }
        let body = PirateRadio.JoinResponse(
            id: state.id.rawValue, joinCode: state.joinCode, djUserId: state.hostId.rawValue,
            djDisplayName: state.member(state.hostId)?.displayName ?? state.hostId.rawValue, memberCount: state.members.count)
        return try RouteHelpers.json(body)
    }

    func register(on router: Router<JamRequestContext>) {
        router.get("health") { _, _ in
            try RouteHelpers.json(PirateRadio.Health(status: "ok", sessions: registry.liveCount))
        }

        router.post("auth") { request, context in
            let buffer = try await request.body.collect(upTo: context.maxBodyBytes)
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: Data(buffer: buffer))
            } catch {
                throw JamError(.malformed, "the body must be JSON with a spotifyUserId")
            }
            guard let body = object as? [String: Any] else { throw JamError(.malformed, "the body must be a JSON object") }
            guard let userId = body["spotifyUserId"] as? String else { throw JamError(.invalidField, "spotifyUserId is required and must be a string") }
            let trimmed = userId.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw JamError(.invalidField, "spotifyUserId must not be empty") }
            guard trimmed.utf8.count <= JamID.maxLength else { throw JamError(.invalidField, "spotifyUserId is too long") }
            // Other control characters are taken, as PirateRadio's server takes them (the name
            // then stands in); U+0000 is not: the id is stored as text, which PostgreSQL refuses
            // it in, and every group commit of the node that took it would fail.
            guard !trimmed.utf8.contains(0) else { throw JamError(.invalidField, "spotifyUserId must not contain U+0000") }
            // PirateRadio's server takes any display name, falling back to the user id; one too
            // long or with control characters is cleaned to fit OpenJam's limits rather than
            // refused, the user id standing in too, so every token it signs can join.
            let name = Self.displayName(given: body["displayName"] as? String, userId: trimmed)
            stations.signedIn(trimmed, displayName: name)
            let token = tokens.sign(userId: trimmed, name: name)
            return try RouteHelpers.json(PirateRadio.AuthResponse(token: token))
        }

        router.post("sessions") { request, context in
            let identity = try tokens.verify(headers: request.headers)
            if rateLimited { try await limiter.check("pr-create:\(identity.userId)", limit: options.createLimit) }
            let (session, _) = try await registry.create(by: identity, CreateSessionRequest())
            let state = await session.snapshot
            let body = PirateRadio.CreateResponse(id: state.id.rawValue, joinCode: state.joinCode, creatorId: state.creatorId.rawValue, djUserId: state.hostId.rawValue)
            return try RouteHelpers.json(body, status: .created)
        }

        router.post("sessions/join") { request, context in
            _ = try tokens.verify(headers: request.headers)
            if rateLimited { try await limiter.check("pr-join:\(RouteHelpers.clientAddress(context))", limit: options.joinLimit) }
            let object = try await Self.bodyObject(request, context, naming: "a code")
            guard let code = object["code"] as? String, !code.isEmpty else { throw JamError(.invalidField, "code is required") }
            // PirateRadio's server looks any non-empty code up, so one that is only spaces, or
            // longer than any code, is simply not found.
            guard (try? JoinCodes.read(code)) != nil else { throw JamError(.notFound, "no session with that code") }
            // Its server forgets a code with its session: an ended one's is not found.
            let session = try await registry.session(code: code) { _ in JamError(.notFound, "no session with that code") }
            return try await join(session)
        }

        // The dial joins a station by its session id, whatever the age of its code.
        router.post("sessions/join-by-id") { request, context in
            _ = try tokens.verify(headers: request.headers)
            if rateLimited { try await limiter.check("pr-join-by-id:\(RouteHelpers.clientAddress(context))", limit: options.joinByIdLimit) }
            let object = try await Self.bodyObject(request, context, naming: "a sessionId")
            guard let raw = object["sessionId"] as? String, !raw.isEmpty else { throw JamError(.invalidField, "sessionId required") }
            guard let id = JamID.uuid(raw) else { throw JamError(.notFound, "Session not found") }
            return try await join(try await Self.session(id, in: registry))
        }

        // The dial's list: sessions playing or with a queue, named by their creator's sign-in.
        router.get("stations") { request, _ in
            _ = try tokens.verify(headers: request.headers)
            var found: [(createdAt: Millis, station: PirateRadio.Station)] = []
            for session in registry.liveSessions {
                let live = await session.inspect { state, wire -> (creator: String, id: String, createdAt: Millis, track: PirateRadio.RawJSON?)? in
                    guard state.current?.state == .playing || !state.queue.isEmpty else { return nil }
                    let pirate = (wire as? PirateRadioWire) ?? PirateRadioWire(epoch: state.epoch)
                    return (state.creatorId.rawValue, state.id.rawValue, state.createdAt, state.current.map { pirate.show($0.item) })
                }
                guard let live, let user = stations.user(live.creator) else { continue }
                let station = PirateRadio.Station(
                    userId: live.creator, displayName: user.displayName, frequency: Double(user.tenths) / 10, sessionId: live.id,
                    currentTrack: live.track)
                found.append((live.createdAt, station))
            }
            // In the order the sessions were made, as its server lists them: the app tunes to
            // the first when it has no favourite.
            let list = found.sorted { ($0.createdAt, $0.station.sessionId) < ($1.createdAt, $1.station.sessionId) }.map(\.station)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.encode(PirateRadio.Stations(stations: list)))))
        }

        // Its server lists every session for its monitoring page, without a token (join codes
        // included): this profile is for a network its users trust (docs/PIRATE_RADIO.md).
        router.get("admin/sessions") { _, _ in
            var found: [(createdAt: Millis, session: PirateRadio.AdminSession)] = []
            for session in registry.liveSessions {
                let (now, quietMs) = (clock.now(), session.silence(at: .now()).nanoseconds / 1_000_000)
                let view = await session.inspectWithSockets { state, wire, sockets in
                    let pirate = (wire as? PirateRadioWire) ?? PirateRadioWire(epoch: state.epoch)
                    let members = state.members.map {
                        PirateRadio.AdminMember(userId: $0.userId.rawValue, displayName: $0.displayName, joinedAt: $0.joinedAt, alive: sockets.contains($0.userId))
                    }
                    return (state.createdAt, pirate.snapshot(state, now: now), members)
                }
                let codeCreatedAt = registry.codeIssuedAt(view.1.joinCode) ?? view.0
                found.append((view.0, PirateRadio.AdminSession(snapshot: view.1, members: view.2, lastActivity: now - quietMs, codeCreatedAt: codeCreatedAt)))
            }
            let list = found.sorted { ($0.createdAt, $0.session.snapshot.id) < ($1.createdAt, $1.session.snapshot.id) }.map(\.session)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.encode(PirateRadio.AdminSessions(sessions: list, serverTime: clock.now())))))
        }

        router.get("sessions/:id") { request, context in
            _ = try tokens.verify(headers: request.headers)
            let raw = try context.parameters.require("id")
            guard let id = JamID.uuid(raw) else { throw JamError(.notFound, "no session \(raw.prefix(64))") }
            let session = try await Self.session(id, in: registry)
            let now = clock.now()
            let snapshot = try await session.readStored { state, wire in
                let pirate = (wire as? PirateRadioWire) ?? PirateRadioWire(epoch: state.epoch)
                return pirate.snapshot(state, now: now)
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.encode(snapshot))))
        }
    }
}
