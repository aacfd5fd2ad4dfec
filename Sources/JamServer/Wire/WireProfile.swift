import Hummingbird
import ServiceLifecycle
import JamMedia
import Prometheus
import JamCore
import JamProtocol
import Logging
import NIOCore
import NIOHTTP1

/// A frame for everyone (or most) in a session, following event `seq`.
package struct WireFrame: Sendable {
    package var seq: Int64
    package var bytes: ByteBuffer
    package var audience: Audience
    /// Kept in the replay ring (and the store) for resumes.
    package var logged: Bool

    package init(seq: Int64, bytes: ByteBuffer, audience: Audience, logged: Bool) {
        self.seq = seq
        self.bytes = bytes
        self.audience = audience
        self.logged = logged
    }
}

/// A client message as its profile decoded it (on the socket's loop).
package protocol DecodedMessage: Sendable {}

/// A message that could not be decoded, with the command id when one could be salvaged.
package struct DecodeFailure: Error, Sendable {
    package var error: JamError
    package var id: String?

    package init(error: JamError, id: String?) {
        self.error = error
        self.id = id
    }
}

/// Close a session's sockets after this long without a message from any of them (a socket
/// not yet in a session: from its own client).
package struct IdleTimeout: Sendable {
    package var milliseconds: Int64
    package var code: UInt16
    package var reason: String

    package init(milliseconds: Int64, code: UInt16, reason: String) {
        self.milliseconds = milliseconds
        self.code = code
        self.reason = reason
    }
}

/// Who opened a realtime socket and for which session.
package struct RealtimeTicket: Sendable {
    package var session: LiveSession
    package var user: UserID
    package var displayName: String
    /// Resume after this `seq` (OpenJam's `?lastSeq=`).
    package var lastSeq: Int64?

    package init(session: LiveSession, user: UserID, displayName: String, lastSeq: Int64?) {
        self.session = session
        self.user = user
        self.displayName = displayName
        self.lastSeq = lastSeq
    }
}

/// What a client message asks of its session.
package enum SessionRequest: Sendable {
    /// Apply `command`; `replyId` gets an ack or an error where the protocol has ids, and
    /// `relay` is the message data a profile forwards to others as sent.
    case command(Command, replyId: String?, relay: String?)
    /// Resume after `lastSeq` (or send the whole state), then acknowledge `replyId`.
    case hello(lastSeq: Int64?, replyId: String?)
    /// A clock-sync ping.
    case ping(clientSendTime: Double)
    /// A device's sync report, or a calibration or re-sync: passing, never logged as such.
    case deviceSync(DeviceSyncRequest, replyId: String?)
    /// Send `frame` to the host's sockets only (the sender's too, when it is the host's).
    case toHost(ByteBuffer)
    /// Send `frame` to the sender's socket only.
    case reply(ByteBuffer)
    /// Answer with this error and change nothing.
    case refuse(JamError, replyId: String?)
    /// Nothing to do.
    case ignore
}

/// What a device-sync message asks: kept in memory by the node the device is on.
package enum DeviceSyncRequest: Sendable {
    /// A device's measurement (also applied as `Command.syncReport` for the start lead).
    case report(SyncReport)
    /// A host starts a room calibration.
    case calibrate(Calibrate)
    /// The listener's result.
    case calibrationReport(CalibrationReport)
    /// A host asks a device to re-sync.
    case resync(Resync)
}

/// What produced a batch of domain events.
package enum WireCause: Sendable {
    /// A member's command; `relay` is the message data a profile forwards as sent.
    case command(Command, by: UserID, connection: ConnectionID?, relay: String?)
    /// A member's command that another node applied, read here from the session's log.
    case followed(Command, by: UserID)
    /// Time passing (auto-advance, grace periods) or the server's own upkeep.
    case tick
}

/// How one session speaks on the wire: the frames for its events and its answers, and what
/// a client's message asks of it. One value per session, owned by `LiveSession`, so a
/// profile can keep counters of its own.
package protocol SessionWire: Sendable {
    /// True when an open socket is membership: opening one joins, closing the last leaves,
    /// and a user holds one socket at a time.
    var socketsAreMembership: Bool { get }

    /// The frames for what one change produced.
    mutating func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame]

    /// What `message` asks of the session, with its state at hand.
    func request(for message: any DecodedMessage, from user: UserID, state: SessionState, ids: any IDGenerator, now: Millis) -> SessionRequest

    /// The whole state for one member.
    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> ByteBuffer

    /// A socket of `user` opened (after their join, if it made one): the frame that greets it,
    /// and one for the session's other sockets, if the protocol announces every socket.
    mutating func socketOpened(by user: UserID, state: SessionState, now: Millis) -> (greeting: ByteBuffer, others: ByteBuffer?)

    /// The answer to a command with an id, if the protocol has one.
    func ack(_ ack: Ack, state: SessionState, now: Millis) -> ByteBuffer?

    /// The answer to a refused or unreadable message.
    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> ByteBuffer

    /// The answer to a clock-sync ping.
    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> ByteBuffer

    /// A passing frame (`syncStatus`, `calibration`, …, a member's `myChoices`), or nil when
    /// the protocol has no such thing.
    func passing(_ event: ServerEvent, state: SessionState, now: Millis) -> ByteBuffer?

    /// A socket of a user who is already connected opened: the older ones are closed with this
    /// code, or nil when a user may hold several.
    var replacedSocketClose: (code: UInt16, reason: String)? { get }
}

extension SessionWire {
    /// The whole state, and nothing for the others (OpenJam announces members by their joins).
    package mutating func socketOpened(by user: UserID, state: SessionState, now: Millis) -> (greeting: ByteBuffer, others: ByteBuffer?) {
        (stateSync(state, for: user, now: now), nil)
    }
}

/// What a server profile fixes for every session it creates: rules, limits, code format
/// and how its sessions speak on the wire.
package struct SessionDefaults: Sendable {
    package let rules: SessionRules
    package let settings: SessionSettings
    package let codes: JoinCodes
    /// How long a join code admits people; `nil` for as long as the session lives.
    package let codeLifetimeMs: Int64?
    package let makeWire: @Sendable (_ epoch: Int64) -> any SessionWire

    package init(
        rules: SessionRules, settings: SessionSettings, codes: JoinCodes, codeLifetimeMs: Int64?,
        makeWire: @escaping @Sendable (_ epoch: Int64) -> any SessionWire
    ) {
        self.rules = rules
        self.settings = settings
        self.codes = codes
        self.codeLifetimeMs = codeLifetimeMs
        self.makeWire = makeWire
    }
}

/// What the server around the sessions gives a profile to build its surface with.
package struct ProfileContext: Sendable {
    package let registry: SessionRegistry
    package let clock: any ServerClock
    package let ids: any IDGenerator
    /// OpenJam's guest tokens.
    package let signer: TokenSigner
    /// The server secret, for profiles that sign tokens of their own.
    package let secret: String
    package let limiter: RateLimiter
    package let configuration: ServerConfiguration
    /// The registry `/metrics` exports, when the process bootstrapped one.
    package let metrics: PrometheusCollectorRegistry?
    /// The music library, when the profile uses one.
    package let library: MusicLibrary?
    package let logger: Logger
}

/// One wire protocol the server can speak: OpenJam's own, or a foreign app's. It owns
/// everything protocol-shaped (REST routes and error bodies, which upgrades are its
/// realtime sockets, how they authenticate, decoding messages, frames, close codes), so
/// the sessions underneath only ever see `Command`s.
package protocol WireProfile: Sendable {
    /// Its name on the command line and in logs.
    var name: String { get }
    /// What its sessions are like.
    var defaults: SessionDefaults { get }
    /// Close a session's sockets after this long without a message from any member.
    var idleTimeout: IdleTimeout? { get }
    /// When its sockets are pinged, so that one whose peer went away without a word closes.
    var heartbeat: Heartbeat { get }
    /// Whether its sessions need the music library (fallback, search, audio).
    var usesLibrary: Bool { get }
    /// Whether members' socket messages are held to `ServerConfiguration.commandLimits`
    /// (a foreign profile matches its original server, which may have had none).
    var limitsSocketMessages: Bool { get }
    /// Largest socket message it takes, in bytes; a larger one closes the socket (1009).
    var maxMessageBytes: Int { get }
    /// Whether a GET route answers HEAD too, with its headers and no body (RFC 9110 §9.3.2),
    /// as a general-purpose server must; a foreign profile does what its original server did.
    var answersHeadAsGet: Bool { get }

    /// Adds the profile's REST routes and middleware; returns any services they need.
    func registerRoutes(on router: Router<JamRequestContext>, context: ProfileContext) -> [any Service]

    /// Whether an upgrade request is for this profile's realtime socket.
    func isRealtimeRequest(_ head: HTTPRequestHead) -> Bool

    /// Authenticates a realtime socket and finds its session.
    func openRealtime(_ head: HTTPRequestHead, context: ProfileContext) async throws(JamError) -> RealtimeTicket

    /// How a socket that could not be opened is refused: a frame to send first, and the close code.
    func refusal(for error: JamError, clock: any ServerClock) -> (frame: ByteBuffer?, code: UInt16)

    /// Decodes one text message.
    func decode(_ text: ByteBuffer) -> Result<any DecodedMessage, DecodeFailure>

    /// Whether a binary frame is read as UTF-8 text and decoded like a text one (some apps
    /// send their JSON as binary frames); otherwise it is refused.
    var acceptsBinaryFrames: Bool { get }
}

extension WireProfile {
    /// OpenJam's own protocol is text frames only.
    package var acceptsBinaryFrames: Bool { false }
    /// OpenJam's own: a ping after 30 s of silence, so a dead peer leaves within 60–90 s and
    /// a busy socket is never pinged.
    package var heartbeat: Heartbeat { .afterSilence(.seconds(30)) }
}
