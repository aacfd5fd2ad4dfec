/// Why the server closed a realtime socket.
///
/// A refusal is 4000 + the HTTP status of the error (`4404` for an unknown session); a
/// refusal never gets better by reconnecting, the other codes may.
public struct CloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    /// Creates a close code from its number.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The member left, or the server stopped.
    public static let normal = CloseCode(rawValue: 1000)
    /// A frame broke the WebSocket protocol (fragments out of order).
    public static let protocolError = CloseCode(rawValue: 1002)
    /// A text message was not UTF-8.
    public static let invalidText = CloseCode(rawValue: 1007)
    /// A frame was larger than the server accepts.
    public static let tooBig = CloseCode(rawValue: 1009)
    /// The connection request was malformed (a bad session id or `lastSeq`).
    public static let badRequest = CloseCode(rawValue: 4400)
    /// No valid token.
    public static let unauthorized = CloseCode(rawValue: 4401)
    /// Not a member, or removed by the host.
    public static let forbidden = CloseCode(rawValue: 4403)
    /// No such session.
    public static let notFound = CloseCode(rawValue: 4404)
    /// The session has ended.
    public static let gone = CloseCode(rawValue: 4410)
    /// The client stopped reading and fell too far behind; reconnecting resumes it.
    public static let slowReader = CloseCode(rawValue: 4429)

    /// The code that refuses a socket for `error`: 4000 + its HTTP status.
    public init(refusing error: ErrorCode) {
        rawValue = 4000 + UInt16(min(error.httpStatus, 999))
    }

    /// The failure a close code means for good, or nil when reconnecting may help. The
    /// server's refusal frame before the close (`refusal`, an error without an id) names it
    /// more closely when it is the refusal the code stands for: 4403 is a host's removal
    /// (`forbidden`) or no membership (`notMember`), and only the latter may join again.
    public static func permanentFailure(_ code: UInt16?, reason: String?, refusal: JamError? = nil) -> JamError? {
        let failure = closeFailure(code, reason: reason)
        if failure != nil, let refusal, code == CloseCode(refusing: refusal.code).rawValue { return refusal }
        return failure
    }

    private static func closeFailure(_ code: UInt16?, reason: String?) -> JamError? {
        let reason = reason ?? ""
        switch code.map(CloseCode.init(rawValue:)) {
        case .badRequest?: return JamError(.invalidField, reason.isEmpty ? "the server refused the connection" : reason)
        case .unauthorized?: return JamError(.unauthorized, reason.isEmpty ? "sign in again" : reason)
        case .forbidden?: return JamError(.forbidden, reason.isEmpty ? "not a member of this session" : reason)
        case .notFound?: return JamError(.notFound, reason.isEmpty ? "the session does not exist" : reason)
        case .gone?: return JamError(.gone, reason.isEmpty ? "the session has ended" : reason)
        default: return nil
        }
    }

    /// Whether an endpoint may put this code in a close frame (RFC 6455 §7.4): 1004–1006 and
    /// 1015 only report what happened locally, 1016–2999 are unassigned and codes from 5000 do
    /// not exist.
    public var mayAppearInCloseFrame: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    public var description: String { "\(rawValue)" }
}
