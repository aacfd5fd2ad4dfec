import JamTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JamProtocol

/// A REST answer: status, headers and body.
struct RestResponse: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// Decodes the body as `T`.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw TestFailure("could not decode \(T.self) from \(status): \(String(decoding: body, as: UTF8.self))")
        }
    }

    /// The error body's code, if the body is one.
    var errorCode: ErrorCode? { (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error.code }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A minimal HTTP client for tests (URLSession: what an app would use too).
struct RestClient: Sendable {
    let baseURL: String

    func request(_ method: String, _ path: String, token: String? = nil, body: Data? = nil, headers: [String: String] = [:]) async throws -> RestResponse {
        guard let url = URL(string: baseURL + path) else { throw TestFailure("bad url \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 10
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (key, value) in headers { request.setValue(value, forHTTPHeaderField: key) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestFailure("not an HTTP response") }
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)".lowercased()] = "\(value)" }
        return RestResponse(status: http.statusCode, headers: fields, body: data)
    }

    func send<B: Encodable>(_ method: String, _ path: String, token: String? = nil, json: B, headers: [String: String] = [:]) async throws -> RestResponse {
        try await request(method, path, token: token, body: try JSONEncoder().encode(json), headers: headers)
    }

    func raw(_ method: String, _ path: String, token: String? = nil, text: String) async throws -> RestResponse {
        try await request(method, path, token: token, body: Data(text.utf8))
    }

    // MARK: Conveniences

    func guest(_ name: String) async throws -> GuestAuthResponse {
        let response = try await send("POST", "/auth/guest", json: GuestAuthRequest(displayName: name))
        guard response.status == 201 else { throw TestFailure("guest auth failed: \(response.status) \(response.text)") }
        return try response.decode(GuestAuthResponse.self)
    }

    func create(_ token: String, _ body: CreateSessionRequest = CreateSessionRequest()) async throws -> SessionView {
        let response = try await send("POST", "/api/v1/sessions", token: token, json: body)
        guard response.status == 201 else { throw TestFailure("create failed: \(response.status) \(response.text)") }
        return try response.decode(SessionView.self)
    }

    func join(_ token: String, code: String) async throws -> SessionView {
        let response = try await send("POST", "/api/v1/sessions/join", token: token, json: JoinSessionRequest(code: code))
        guard response.status == 200 else { throw TestFailure("join failed: \(response.status) \(response.text)") }
        return try response.decode(SessionView.self)
    }

    func view(_ token: String, _ session: SessionID) async throws -> SessionView {
        let response = try await request("GET", "/api/v1/sessions/\(session)", token: token)
        guard response.status == 200 else { throw TestFailure("get failed: \(response.status) \(response.text)") }
        return try response.decode(SessionView.self)
    }

    func add(_ token: String, _ session: SessionID, _ track: Track, nonce: String = UUID().uuidString) async throws -> RestResponse {
        try await send("POST", "/api/v1/sessions/\(session)/queue", token: token, json: AddToQueue(track: track, nonce: nonce))
    }
}

/// A track for tests.
func testTrack(_ n: Int, durationMs: Int64? = 180_000) -> Track {
    Track(id: "track-\(n)", name: "Song \(n)", artist: "Artist \(n % 3)", album: "Album", durationMs: durationMs, source: .external)
}
