import Foundation
import Hummingbird
import HummingbirdCore
import ServiceLifecycle
import JamCore
import JamMedia
import JamProtocol
import NIOCore
import NIOHTTP1

/// OpenJam's own protocol: the REST API under `/api/v1`, the browser client, and the
/// realtime socket at `/api/v1/sessions/{id}/realtime`.
package struct OpenJamProfile: WireProfile {
    /// The library sessions fall back to and the routes search and stream (nil: the demo
    /// library is installed and scanned when the application is built).
    package init() {}

    package var name: String { "openjam" }
    package var idleTimeout: IdleTimeout? { nil }
    package var usesLibrary: Bool { true }
    package var limitsSocketMessages: Bool { true }
    package var maxMessageBytes: Int { ClientFrame.maxBytes }
    package var answersHeadAsGet: Bool { true }

    package var defaults: SessionDefaults {
        SessionDefaults(rules: .openJam, settings: SessionSettings(), codes: .openJam, codeLifetimeMs: nil, makeWire: { _ in OpenJamWire() })
    }

    package func registerRoutes(on router: Router<JamRequestContext>, context: ProfileContext) -> [any Service] {
        let configuration = context.configuration
        router.add(middleware: ErrorMiddleware(body: { Data((try? WireCoding.encode(ErrorBody($0))) ?? Data()) }))
        router.add(middleware: AuthMiddleware(signer: context.signer, clock: context.clock, maxBodyBytes: configuration.maxBodyBytes))
        router.add(middleware: RequestLogMiddleware(logger: context.logger))
        if let limits = configuration.rateLimits {
            router.add(middleware: APIRequestLimit(limiter: context.limiter, limits: limits, servesMedia: true))
        }
        SystemRoutes(registry: context.registry, clock: context.clock, metrics: context.metrics).register(on: router)
        AuthRoutes(signer: context.signer, clock: context.clock, ids: context.ids, limiter: context.limiter, limits: configuration.rateLimits).register(on: router)
        SessionRoutes(
            registry: context.registry, limiter: context.limiter, limits: configuration.rateLimits, keyedIDs: KeyedSessionIDs(secret: context.secret)).register(on: router)
        let catalog = LibraryCatalog(context.library ?? MusicLibrary(tracks: []))
        LibraryRoutes(catalog: catalog).register(on: router)
        AudioRoutes(catalog: catalog).register(on: router)
        WebRoutes(folder: configuration.webRoot).register(on: router)
        // Last: it answers only what no route took.
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes, headAsGet: answersHeadAsGet, beside: [("/api/v1/sessions/:id/realtime", .get)], upgrades: true))
        guard !configuration.musicFolders.isEmpty, configuration.libraryRescanSeconds > 0 else { return [] }
        return [LibraryRescanService(
            catalog: catalog, registry: context.registry, interval: .seconds(configuration.libraryRescanSeconds), logger: context.logger)]
    }

    package func isRealtimeRequest(_ head: HTTPRequestHead) -> Bool {
        let path = URI(head.uri).path.split(separator: "/", omittingEmptySubsequences: true)
        return path.count == 5 && path[0] == "api" && path[1] == "v1" && path[2] == "sessions" && path[4] == "realtime"
    }

    package func openRealtime(_ head: HTTPRequestHead, context: ProfileContext) async throws(JamError) -> RealtimeTicket {
        let uri = URI(head.uri)
        let identity = try authenticate(head, uri: uri, context: context)
        if let limits = context.configuration.rateLimits {
            // An upgrade does not reach the router, and a socket opened without `lastSeq` sends
            // the whole session: opening sockets in a loop would be polling past the budget.
            do throws(RateLimitedError) {
                try await context.limiter.check(APIRequestLimit.memberKey(identity.userId), limit: limits.member)
            } catch {
                throw error.refusal
            }
        }
        let path = uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.count == 5 else { throw JamError(.notFound, "no such realtime path") }
        guard let id = JamID.uuid(String(path[3])) else { throw JamError(.invalidField, "session id must be a UUID, got \"\(path[3].prefix(64))\"") }
        var lastSeq: Int64?
        if let text = uri.queryParameters["lastSeq"] {
            guard let value = Int64(String(text)), value >= 0 else { throw JamError(.invalidField, "lastSeq must be a non-negative integer") }
            lastSeq = value
        }
        let session = try await context.registry.session(id)
        return RealtimeTicket(session: session, user: identity.userId, displayName: identity.displayName, lastSeq: lastSeq)
    }

    /// The bearer token of the upgrade request, from its header or its `bearer.<token>` subprotocol.
    private func authenticate(_ head: HTTPRequestHead, uri: URI, context: ProfileContext) throws(JamError) -> Identity {
        let token = try BearerToken.read(
            authorization: BearerToken.single(head.headers["authorization"]), subprotocols: head.headers["sec-websocket-protocol"],
            query: uri.queryParameters["token"])
        guard let token else {
            throw JamError(.unauthorized, "sign in first: send a token as 'Authorization: Bearer <token>' or the subprotocol 'bearer.<token>'")
        }
        return try context.signer.verify(token, now: context.clock.now())
    }

    package func refusal(for error: JamError, clock: any ServerClock) -> (frame: ByteBuffer?, code: UInt16) {
        // A refused upgrade could not say why: the socket opens, says it, and closes.
        let envelope = ServerEnvelope(event: .error(ErrorEvent(id: nil, code: error.code, message: error.message)), epoch: 0, seq: 0, timestamp: clock.now())
        return (ByteBuffer(bytes: envelope.jsonBytes()), CloseCode(refusing: error.code).rawValue)
    }

    package func decode(_ text: ByteBuffer) -> Result<any DecodedMessage, DecodeFailure> {
        let data = Data(buffer: text)
        do {
            return .success(try ClientFrame.decode(data))
        } catch {
            return .failure(DecodeFailure(error: error, id: ClientFrame.salvageId(data)))
        }
    }
}
