/// Every error OpenJam reports, on REST and on the realtime socket alike.
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    /// The body or frame is not JSON, or a field is missing or of the wrong type.
    case malformed
    /// The frame's `type` is not a known command.
    case unknownType
    /// A field has a value outside what is allowed (empty name, bad UUID, negative position...).
    case invalidField
    /// The body or frame is larger than the server accepts.
    case tooLarge
    /// No valid token was presented.
    case unauthorized
    /// The caller is known but may not do this.
    case forbidden
    /// The caller is not a member of the session.
    case notMember
    /// Only hosts may add while the session is locked.
    case locked
    /// The session, item, member or route does not exist.
    case notFound
    /// The path exists, but not with the request's method (REST only; `Allow` lists the ones it takes).
    case methodNotAllowed
    /// The track is already queued or playing.
    case duplicate
    /// The session has reached its member limit.
    case sessionFull
    /// The action does not fit the current state (e.g. pausing when nothing plays).
    case conflict
    /// The session has ended.
    case gone
    /// The caller already has the maximum number of items queued.
    case queueLimit
    /// An `Idempotency-Key` already named a different request (of the same kind, by the same
    /// caller, in the same session): nothing was applied.
    case keyReused
    /// Too many requests; retry later.
    case rateLimited
    /// The server failed; the action did not take effect.
    case `internal`
    /// The server is shutting down or not ready.
    case unavailable

    /// The code for an HTTP status that came without an error body (a proxy answered, say):
    /// the first code carried by that status; a gateway's 502 and 504 (no node answered) are
    /// `unavailable`, any other 5xx `internal` and any other status `malformed`. The web
    /// client's `errorCodeForStatus` mirrors it (Tests/Fixtures/ClientParity/error-statuses.json).
    public static func forStatus(_ status: Int) -> ErrorCode {
        if let carried = allCases.first(where: { $0.httpStatus == status }) { return carried }
        if status == 502 || status == 504 { return .unavailable }
        return status >= 500 ? .internal : .malformed
    }

    /// The HTTP status that carries this error on REST.
    public var httpStatus: Int {
        switch self {
        case .malformed, .unknownType, .invalidField: 400
        case .tooLarge: 413
        case .unauthorized: 401
        case .forbidden, .notMember, .locked: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .duplicate, .sessionFull, .conflict: 409
        case .gone: 410
        case .queueLimit, .keyReused: 422
        case .rateLimited: 429
        case .internal: 500
        case .unavailable: 503
        }
    }
}

/// A typed error with a code and a message meant for people.
public struct JamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of error it is.
    public var code: ErrorCode
    /// A specific explanation, safe to show to the user.
    public var message: String
    /// For `rateLimited` (a socket's budget, or a REST call's `Retry-After`): how long to wait
    /// before the same kind of request can pass, ms.
    public var retryAfterMs: Int64?

    /// Creates an error.
    public init(_ code: ErrorCode, _ message: String, retryAfterMs: Int64? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMs = retryAfterMs
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// The JSON error body of every failed REST call: `{"error": {"code", "message"}}`.
public struct ErrorBody: Codable, Equatable, Sendable {
    /// The code and message.
    public struct Detail: Codable, Equatable, Sendable {
        /// The error code.
        public var code: ErrorCode
        /// A specific explanation.
        public var message: String
    }

    /// The error itself.
    public var error: Detail

    /// Wraps a `JamError`.
    public init(_ error: JamError) {
        self.error = Detail(code: error.code, message: error.message)
    }
}
