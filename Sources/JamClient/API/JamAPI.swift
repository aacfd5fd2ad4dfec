import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JamProtocol

/// OpenJam's REST API over URLSession: sign-in, sessions and the queue for callers
/// without a socket.
public struct JamAPI: Sendable {
    /// The server, e.g. `http://127.0.0.1:8080`.
    public let server: URL
    /// The bearer token, once signed in.
    public var token: String?
    /// When the token is due for a fresh one (ms since 1970 on `wallClock`): half its life
    /// after it came, as the web client does. `nil` for a token given at `init` without one:
    /// due at once, as nothing says how old it is.
    public var tokenRefreshAt: Millis?
    /// This device's time, ms since 1970 (injected by tests that move the server's clock).
    public let wallClock: @Sendable () -> Millis
    private let session: URLSession

    /// Creates a client for `server`; an app that kept a token passes it with the refresh time
    /// it kept beside it.
    public init(
        server: URL, token: String? = nil, tokenRefreshAt: Millis? = nil, session: URLSession = .shared,
        wallClock: @escaping @Sendable () -> Millis = { Millis(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.server = server
        self.token = token
        self.tokenRefreshAt = tokenRefreshAt
        self.session = session
        self.wallClock = wallClock
    }

    /// A guest identity for `displayName`; keeps its token for later calls.
    public mutating func signIn(displayName: String) async throws(JamError) -> GuestAuthResponse {
        let response: GuestAuthResponse = try await send("POST", "/auth/guest", body: GuestAuthRequest(displayName: displayName))
        keep(response)
        return response
    }

    /// Swaps the current token, which must still be valid, for a fresh one and keeps it: an
    /// app refreshes once half of the token's life (`expiresAt`) is gone (`tokenRefreshIsDue`);
    /// a `SessionClient` does it for its own connection.
    public mutating func refreshToken() async throws(JamError) -> GuestAuthResponse {
        let response: GuestAuthResponse = try await send("POST", "/auth/refresh", body: Optional<String>.none)
        keep(response)
        return response
    }

    /// Whether the token has lived half its life (or its age is unknown).
    public var tokenRefreshIsDue: Bool {
        token != nil && tokenRefreshAt.map { wallClock() >= $0 } ?? true
    }

    private mutating func keep(_ response: GuestAuthResponse) {
        let now = wallClock()
        token = response.token
        tokenRefreshAt = now + max(0, (response.expiresAt - now) / 2)
    }

    /// Opens a session hosted by the caller. With `key`, a create sent again after it failed
    /// on the way (no answer, `unavailable`) answers with the session the first one made, if it
    /// made one, instead of opening a second: keep one key per session the person asked for.
    public func createSession(_ request: CreateSessionRequest = CreateSessionRequest(), key: IdempotencyKey? = nil) async throws(JamError) -> SessionView {
        try await send("POST", "/api/v1/sessions", body: request, headers: key.map { [IdempotencyKey.header: $0.value] } ?? [:])
    }

    /// Joins the session with `code`.
    public func join(code: String, displayName: String? = nil) async throws(JamError) -> SessionView {
        try await send("POST", "/api/v1/sessions/join", body: JoinSessionRequest(code: code, displayName: displayName))
    }

    /// The session as the caller sees it.
    public func session(_ id: SessionID) async throws(JamError) -> SessionView {
        try await send("GET", "/api/v1/sessions/\(id)", body: Optional<String>.none)
    }

    /// Leaves the session.
    public func leave(_ id: SessionID) async throws(JamError) {
        try await send("POST", "/api/v1/sessions/\(id)/leave", body: Optional<String>.none)
    }

    /// A host's change to the session, applied all or nothing: settings (`locked` among them),
    /// play, pause or resume, a seek, and a fresh join code (`regenerateJoinCode`, the host
    /// only; the old code stops working). Answers the session as the caller sees it after.
    /// With `key`, the change sent again after it failed on the way is answered, not applied
    /// twice (the same key with another change is refused, `keyReused`). With `epoch` (the
    /// `nowPlaying.epoch` shown), its pause, resume or seek is for that song only: sent late,
    /// once another plays, the whole change is refused (`conflict`); a change with no pause,
    /// resume or seek refuses an epoch (`invalidField`).
    public func updateSession(_ id: SessionID, _ change: UpdateSessionRequest, epoch: Int64? = nil, key: IdempotencyKey? = nil) async throws(JamError) -> SessionView {
        let query = epoch.map { "?epoch=\($0)" } ?? ""
        return try await send("PATCH", "/api/v1/sessions/\(id)\(query)", body: change, headers: key.map { [IdempotencyKey.header: $0.value] } ?? [:])
    }

    /// A fresh join code for the session (the host only), in the session as the host sees it;
    /// the old code, and links and QR codes made from it, stop working.
    public func newJoinCode(_ id: SessionID, key: IdempotencyKey? = nil) async throws(JamError) -> SessionView {
        try await updateSession(id, UpdateSessionRequest(regenerateJoinCode: true), key: key)
    }

    /// Ends the session for everybody (the host only): members' sockets close with the reason.
    public func endSession(_ id: SessionID, key: IdempotencyKey? = nil) async throws(JamError) {
        try await send("DELETE", "/api/v1/sessions/\(id)", body: Optional<String>.none, headers: key.map { [IdempotencyKey.header: $0.value] } ?? [:])
    }

    /// Library tracks matching `query`, best first.
    public func search(_ query: String, limit: Int = 25) async throws(JamError) -> [Track] {
        var components = URLComponents()
        components.path = "/api/v1/search"
        components.queryItems = [URLQueryItem(name: "q", value: query), URLQueryItem(name: "limit", value: String(limit))]
        let path = components.url?.absoluteString ?? "/api/v1/search"
        let results: SearchResults = try await send("GET", path, body: Optional<String>.none)
        return results.tracks
    }

    /// The realtime URL of a session (`ws://` or `wss://`).
    public func realtimeURL(_ id: SessionID, lastSeq: Int64? = nil) -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.scheme = server.scheme == "https" ? "wss" : "ws"
        components.path = "/api/v1/sessions/\(id)/realtime"
        components.queryItems = lastSeq.map { [URLQueryItem(name: "lastSeq", value: String($0))] }
        return components.url ?? server
    }

    /// A link people can open to join with `code`.
    public func joinLink(code: String) -> URL {
        server.appendingPathComponent("j").appendingPathComponent(code)
    }

    private func send<Body: Encodable, Answer: Decodable>(
        _ method: String, _ path: String, body: Body?, headers: [String: String] = [:]
    ) async throws(JamError) -> Answer {
        try WireCoding.decode(Answer.self, from: try await exchange(method, path, body: body, headers: headers))
    }

    private func send<Body: Encodable>(_ method: String, _ path: String, body: Body?, headers: [String: String] = [:]) async throws(JamError) {
        _ = try await exchange(method, path, body: body, headers: headers)
    }

    /// Sends a request; a non-2xx answer becomes the server's typed error.
    private func exchange<Body: Encodable>(_ method: String, _ path: String, body: Body?, headers: [String: String] = [:]) async throws(JamError) -> Data {
        guard let url = URL(string: path, relativeTo: server) else { throw JamError(.invalidField, "bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 15
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try WireCoding.encode(body)
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw JamError(.unavailable, "cannot reach \(server.absoluteString): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            // A rate limit (429) says how long to wait in `Retry-After` seconds, which the app
            // needs to hold its button that long; a proxy's 429 or 503 says it too.
            // Seconds from anybody on the way: a day at most, and none that is not a wait.
            let wait = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After").flatMap(Int64.init)
                .flatMap { $0 > 0 ? min($0, 86_400) * 1000 : nil }
            let body: ErrorBody
            do {
                body = try WireCoding.decode(ErrorBody.self, from: data)
            } catch {
                // A newer server's code this build does not know still carries the server's
                // words; a proxy's page (a node down behind HAProxy is a 503) has none.
                let message = Self.errorMessage(in: data) ?? "the server answered \(status) without an error body"
                throw JamError(ErrorCode.forStatus(status), message, retryAfterMs: wait)
            }
            throw JamError(body.error.code, body.error.message, retryAfterMs: wait)
        }
        return data
    }

    /// The `error.message` of an error body whatever its code, or nil for a body without one.
    static func errorMessage(in data: Data) -> String? {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            return nil  // Not JSON: the caller says the status instead.
        }
        guard let error = (object as? [String: Any])?["error"] as? [String: Any], let message = error["message"] as? String, !message.isEmpty
        else { return nil }
        return message
    }
}
