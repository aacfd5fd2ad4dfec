import Foundation
import Hummingbird
import HummingbirdCore
import JamCore
import JamMedia
import JamProtocol
import JamServer
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// The QueueIT app's protocol (docs/QUEUEIT.md): its REST surface under `/api/v1`, snake_case,
/// with its error bodies, and a realtime socket at `/api/v1/sessions/{id}/realtime`, over
/// OpenJam's sessions. The host's phone plays; the server keeps the queue, the votes and
/// what plays. Sign-in is OpenJam's `POST /auth/guest`, whose token stands in for the app's
/// Supabase one, so the profile is never on by default.
package struct QueueITProfile: WireProfile {
    /// Each user's current session; shared by the routes and every session's wire.
    private let currentSessions = CurrentSessions()

    package init() {}

    package var name: String { "queueit" }
    package var idleTimeout: IdleTimeout? { nil }
    package var usesLibrary: Bool { true }
    package var limitsSocketMessages: Bool { true }
    package var maxMessageBytes: Int { ClientFrame.maxBytes }
    /// FastAPI's routes take only the methods they name: HEAD on a GET route is 405.
    package var answersHeadAsGet: Bool { false }

    /// The host's device plays; no member or queue limits beyond generous ones (its backend
    /// has none), duplicates allowed (it has no check), equal scores ordered as its tiers are,
    /// skip requests outliving their members' leaving, and a session with music waits a day
    /// for somebody to come back.
    package var defaults: SessionDefaults {
        let index = currentSessions
        return SessionDefaults(
            // Equal scores in its backend's tiers: a song that lost a vote leads those it falls among.
            // Its skip requests are rows that a member's leaving does not delete. Its sessions'
            // `host_id` never changes: a host who leaves is host again on joining again, and
            // nobody takes the role meanwhile (its app's host device plays).
            rules: SessionRules(
                startMode: .hostDevice, maxQueueLength: 1000, emptyGraceMs: 24 * 3_600_000, tracksNeedIdAndName: false, equalScores: .fallenFirst,
                departedSkipRequests: .keptCheckedAtEveryRequest, hostOfEmptySession: .kept, hostSuccession: .nobody),
            settings: SessionSettings(maxMembers: SessionSettings.memberLimit, maxQueuedPerMember: SessionSettings.queueLimit, allowDuplicates: true),
            codes: .openJam, codeLifetimeMs: nil,
            makeWire: { _ in QueueITWire(currentSessions: index) })
    }

    package func registerRoutes(on router: Router<JamRequestContext>, context: ProfileContext) -> [any Service] {
        let configuration = context.configuration
        router.add(middleware: QueueITErrorMiddleware())
        router.add(middleware: AuthMiddleware(signer: context.signer, clock: context.clock, maxBodyBytes: configuration.maxBodyBytes, header: .bearerRemoved))
        router.add(middleware: RequestLogMiddleware(logger: context.logger))
        if let limits = configuration.rateLimits {
            router.add(middleware: APIRequestLimit(limiter: context.limiter, limits: limits, servesMedia: false))
        }
        SystemRoutes(registry: context.registry, clock: context.clock, metrics: context.metrics).register(on: router)
        AuthRoutes(signer: context.signer, clock: context.clock, ids: context.ids, limiter: context.limiter, limits: configuration.rateLimits)
            .register(on: router)
        let edge = QueueITEdge(registry: context.registry, currentSessions: currentSessions, limiter: context.limiter, limits: configuration.rateLimits)
        let catalog = LibraryCatalog(context.library ?? MusicLibrary(tracks: []))
        QueueITSessionRoutes(edge: edge).register(on: router)
        QueueITSongRoutes(edge: edge, catalog: catalog).register(on: router)
        // Last, so it answers only what no route took: its framework's 405 for a path that
        // exists with other methods (its error handler drops the `Allow` header).
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes, headAsGet: answersHeadAsGet, beside: [("/api/v1/sessions/:id/realtime", .get)]))
        var services: [any Service] = [CurrentSessionsService(index: currentSessions, registry: context.registry, logger: context.logger)]
        if !configuration.musicFolders.isEmpty, configuration.libraryRescanSeconds > 0 {
            services.append(LibraryRescanService(
                catalog: catalog, registry: context.registry, interval: .seconds(configuration.libraryRescanSeconds), logger: context.logger))
        }
        return services
    }

    package func isRealtimeRequest(_ head: HTTPRequestHead) -> Bool {
        let path = URI(head.uri).path.split(separator: "/", omittingEmptySubsequences: true)
        return path.count == 5 && path[0] == "api" && path[1] == "v1" && path[2] == "sessions" && path[4] == "realtime"
    }

    /// A member's socket for their session: the token in `Authorization` (read as its backend
    /// reads it, as its app's socket client sends it) or the `bearer.<token>` subprotocol (as a
    /// browser can).
    package func openRealtime(_ head: HTTPRequestHead, context: ProfileContext) async throws(JamError) -> RealtimeTicket {
        let uri = URI(head.uri)
        let token = try BearerToken.read(
            authorization: head.headers.first(name: "authorization"), rule: .bearerRemoved, subprotocols: head.headers["sec-websocket-protocol"],
            query: uri.queryParameters["token"])
        guard let token else { throw JamError(.unauthorized, "Missing Authorization header") }
        let identity = try context.signer.verify(token, now: context.clock.now())
        let path = uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.count == 5, let id = JamID.uuid(String(path[3])) else { throw JamError(.notFound, "Session not found") }
        let session: LiveSession
        do throws(JamError) {
            session = try await context.registry.session(id)
        } catch {
            throw JamError(.notFound, "Session not found")
        }
        let state = await session.snapshot
        guard state.member(identity.userId) != nil else {
            let refusal = state.refusal(ofNonMember: identity.userId)
            throw refusal.code == .notMember ? JamError(.notMember, "join the session before opening its realtime socket") : refusal
        }
        return RealtimeTicket(session: session, user: identity.userId, displayName: identity.displayName, lastSeq: nil)
    }

    /// The socket opens, says why in an `error` event, and closes with OpenJam's code for it.
    package func refusal(for error: JamError, clock: any ServerClock) -> (frame: ByteBuffer?, code: UInt16) {
        (QueueITWire.frame("error", sessionId: "", QueueIT.EventData(message: error.message)), CloseCode(refusing: error.code).rawValue)
    }

    package func decode(_ text: ByteBuffer) -> Result<any DecodedMessage, DecodeFailure> {
        .success(QueueITSocketMessage())
    }
}
