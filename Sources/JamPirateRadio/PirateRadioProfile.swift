import Foundation
import Hummingbird
import HummingbirdCore
import ServiceLifecycle
import JamCore
import JamPirateRadioWire
import JamProtocol
import JamServer
import NIOCore
import NIOHTTP1

/// Limits and timings of the PirateRadio profile; the defaults are its server's.
public struct PirateRadioOptions: Sendable {
    /// A session whose members all send nothing for this long has its sockets closed with
    /// 4008 (its server's 30 minutes; WebSocket pings keep quiet sockets alive until then).
    public var idleTimeoutMs: Int64 = 1_800_000
    /// How long a session with a track or a queue outlives its last socket.
    public var gracePeriodMs: Int64 = 300_000
    /// How often every socket is pinged: one that has answered nothing by the next ping is
    /// closed and its member leaves, 1–2 intervals (15–30 s) after it went silent, as at its
    /// server's sweep. At least 250 ms.
    public var pingIntervalMs: Int64 = 15_000
    /// How often members without a socket are looked for: one without a socket at two sweeps
    /// running leaves (its server drops them at its sweep every 15 s).
    public var sweepIntervalMs: Int64 = 15_000
    /// How long a join code admits people.
    public var codeLifetimeMs: Int64 = 3_600_000
    /// How long a token from `/auth` is valid.
    public var tokenLifetimeMs: Int64 = 24 * 3_600_000
    /// Members per session.
    public var maxMembers = 10
    /// Tracks in the queue.
    public var maxQueue = 100
    /// Sessions one user may create per window.
    public var createLimit: (count: Int, window: Int) = (5, 3600)
    /// Join attempts by code per client address per window (codes are 4 digits: guessable).
    public var joinLimit: (count: Int, window: Int) = (10, 60)
    /// Joins by session id per client address per window. Its server limits none: the dial
    /// tunes in at every station it passes, and an id cannot be guessed; this only stops a flood.
    public var joinByIdLimit: (count: Int, window: Int) = (600, 60)

    /// Creates the defaults.
    public init() {}
}

/// The PirateRadio app's protocol (docs/PIRATE_RADIO.md): its REST surface, its socket on any
/// path with `?token=&sessionId=`, its messages, frames and close codes, over OpenJam's
/// sessions. Its `/auth` trusts the user id a client sends, so it is never on by default.
package struct PirateRadioProfile: WireProfile {
    let options: PirateRadioOptions

    package init(options: PirateRadioOptions = PirateRadioOptions()) {
        self.options = options
    }

    package var name: String { "pirate-radio" }
    package var usesLibrary: Bool { false }
    /// PirateRadio's server limits no socket message; its clients may rely on that.
    package var limitsSocketMessages: Bool { false }
    /// Its server's `maxPayload`: a DJ whose message is larger loses the socket, and the role.
    package var maxMessageBytes: Int { 512_000 }
    /// Express answers HEAD with a GET route's headers.
    package var answersHeadAsGet: Bool { true }

    package var idleTimeout: IdleTimeout? {
        IdleTimeout(milliseconds: options.idleTimeoutMs, code: PirateRadio.CloseCode.idle, reason: "Session idle timeout")
    }

    /// Its server pings every member at each sweep, busy or not.
    package var heartbeat: Heartbeat { .every(.milliseconds(options.pingIntervalMs)) }

    /// DJ-driven sessions of 10 members with 100 queued tracks and 4-digit codes.
    package var defaults: SessionDefaults {
        SessionDefaults(
            rules: SessionRules(
                startMode: .djDriven, maxQueueLength: options.maxQueue, emptyGraceMs: options.gracePeriodMs,
                // PirateRadio's server queues and plays a track whatever fields it has, checks
                // a nonce only against what is still queued, keeps the DJ of a session left
                // empty (a listener tuning in meanwhile is a listener), and passes the DJ role
                // to whoever is longest in the session (its members are there or gone).
                tracksNeedIdAndName: false, noncesRepeatOnlyWhileQueued: true, hostOfEmptySession: .kept, hostSuccession: .anyMember),
            settings: SessionSettings(maxMembers: options.maxMembers, maxQueuedPerMember: options.maxQueue, allowDuplicates: true),
            codes: .pirateRadio, codeLifetimeMs: options.codeLifetimeMs,
            makeWire: { epoch in PirateRadioWire(epoch: epoch) })
    }

    private func tokens(_ context: ProfileContext) -> PirateRadioTokens {
        PirateRadioTokens(secret: context.secret, lifetimeMs: options.tokenLifetimeMs, clock: context.clock)
    }

    package func registerRoutes(on router: Router<JamRequestContext>, context: ProfileContext) -> [any Service] {
        // Its server lets any page call it (for its monitoring dashboard); outermost, so refusals carry it too.
        router.add(middleware: CORSMiddleware(allowOrigin: .all, allowHeaders: [.authorization, .contentType], allowMethods: [.get, .post, .options]))
        router.add(middleware: ErrorMiddleware(body: { Data((try? WireCoding.encode(PirateRadio.ErrorBody(error: $0.message))) ?? Data()) }))
        SystemRoutes(registry: context.registry, clock: context.clock, metrics: context.metrics).register(on: router)
        PirateRadioRoutes(
            registry: context.registry, tokens: tokens(context), clock: context.clock, limiter: context.limiter, options: options,
            rateLimited: context.configuration.rateLimits != nil, stations: PirateRadioStations()
        ).register(on: router)
        return [SocketMembershipSweep(registry: context.registry, interval: .milliseconds(options.sweepIntervalMs), logger: context.logger)]
    }

    /// Its socket answers on any path.
    package func isRealtimeRequest(_ head: HTTPRequestHead) -> Bool { true }

    package func openRealtime(_ head: HTTPRequestHead, context: ProfileContext) async throws(JamError) -> RealtimeTicket {
        let query = URI(head.uri).queryParameters
        guard let token = query["token"], !token.isEmpty else { throw JamError(.unauthorized, "missing token") }
        let identity = try tokens(context).verify(String(token))
        guard let raw = query["sessionId"], let id = JamID.uuid(String(raw)) else { throw JamError(.notFound, "unknown session") }
        let session = try await context.registry.session(id)
        return RealtimeTicket(session: session, user: identity.userId, displayName: identity.displayName, lastSeq: nil)
    }

    package func refusal(for error: JamError, clock: any ServerClock) -> (frame: ByteBuffer?, code: UInt16) {
        let code: UInt16 = switch error.code {
        case .unauthorized: PirateRadio.CloseCode.unauthorized
        case .sessionFull: PirateRadio.CloseCode.full
        case .notFound, .gone, .notMember: PirateRadio.CloseCode.unknownSession
        // PirateRadio's server has no close code for these; OpenJam's (4000 + HTTP status) stands in.
        case .malformed, .unknownType, .invalidField, .tooLarge, .forbidden, .locked, .duplicate, .conflict, .queueLimit, .keyReused, .methodNotAllowed,
            .rateLimited, .internal, .unavailable:
            CloseCode(refusing: error.code).rawValue
        }
        return (nil, code)
    }

    /// Every message decodes: what PirateRadio's server ignores is ignored, and what the
    /// profile refuses carries its error until the session knows whether the sender may send it.
    package func decode(_ text: ByteBuffer) -> Result<any DecodedMessage, DecodeFailure> {
        .success(PirateRadio.ClientMessage.decode(Data(buffer: text)))
    }

    /// The app sends its JSON in binary frames, which PirateRadio's server reads like text.
    package var acceptsBinaryFrames: Bool { true }
}
