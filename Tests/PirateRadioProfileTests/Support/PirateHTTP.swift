import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP answer.
struct HTTPResult: Sendable, CustomStringConvertible {
    let status: Int
    let body: Data
    /// Response headers, names lowercased.
    var headers: [String: String] = [:]

    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object, or nil.
    var json: JSONObject? { parseJSONObject(body) }
    /// The `error` field of the body when it is a string.
    var errorMessage: String? { json?["error"] as? String }
    var description: String { "\(status) \(text)" }
}

/// A signed-in PirateRadio user.
struct PirateUser: Sendable {
    let id: String
    let displayName: String
    let token: String
}

/// A session as `POST /sessions` returns it.
struct CreatedSession: Sendable {
    let id: String
    let joinCode: String
}

/// The PirateRadio REST surface over URLSession (what the app uses).
struct PirateHTTP: Sendable {
    let baseURL: String

    /// `authorization` is sent verbatim as the Authorization header; `token` is sent as `Bearer <token>`.
    func request(
        _ method: String, _ path: String, token: String? = nil, authorization: String? = nil, body: Data? = nil, headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        guard let url = URL(string: baseURL + path) else { throw TestFailure("bad url \(baseURL + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 10
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestFailure("not an HTTP response for \(method) \(path)") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return HTTPResult(status: http.statusCode, body: data, headers: fields)
    }

    /// A request whose body is `object` as JSON.
    func send(_ method: String, _ path: String, token: String? = nil, authorization: String? = nil, json object: Any) async throws -> HTTPResult {
        try await request(method, path, token: token, authorization: authorization, body: jsonData(object))
    }

    /// A request whose body is `text` verbatim.
    func send(_ method: String, _ path: String, token: String? = nil, text: String) async throws -> HTTPResult {
        try await request(method, path, token: token, body: Data(text.utf8))
    }

    // MARK: Conveniences that require success

    /// `POST /auth`; `displayName` nil leaves the field out.
    func signIn(_ id: String, displayName: String? = nil) async throws -> PirateUser {
        var body: JSONObject = ["spotifyUserId": id]
        if let displayName { body["displayName"] = displayName }
        let result = try await send("POST", "/auth", json: body)
        guard result.status == 200, let token = result.json?["token"] as? String else {
            throw TestFailure("POST /auth for \(id) failed: \(result)")
        }
        return PirateUser(id: id, displayName: (displayName?.isEmpty ?? true) ? id : displayName!, token: token)
    }

    /// `POST /sessions`, requiring 201.
    func createSession(_ user: PirateUser) async throws -> CreatedSession {
        let result = try await request("POST", "/sessions", token: user.token)
        guard result.status == 201, let json = result.json, let id = json["id"] as? String, let code = json["joinCode"] as? String else {
            throw TestFailure("POST /sessions for \(user.id) failed: \(result)")
        }
        return CreatedSession(id: id, joinCode: code)
    }

    /// `POST /sessions/join {code}` (any status).
    func join(_ user: PirateUser, code: String) async throws -> HTTPResult {
        try await send("POST", "/sessions/join", token: user.token, json: ["code": code])
    }

    /// `POST /sessions/join`, requiring 200.
    func joinOK(_ user: PirateUser, code: String) async throws -> HTTPResult {
        let result = try await join(user, code: code)
        guard result.status == 200 else { throw TestFailure("join by \(user.id) with \(code) failed: \(result)") }
        return result
    }

    /// `GET /sessions/{id}` (any status).
    func get(_ user: PirateUser, session id: String) async throws -> HTTPResult {
        try await request("GET", "/sessions/\(id)", token: user.token)
    }

    /// `GET /sessions/{id}`, requiring 200 and returning the snapshot.
    func snapshot(_ user: PirateUser, session id: String) async throws -> JSONObject {
        let result = try await get(user, session: id)
        guard result.status == 200, let json = result.json else { throw TestFailure("GET /sessions/\(id) failed: \(result)") }
        return json
    }
}
