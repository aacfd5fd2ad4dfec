import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JamQueueIT
import JamServer
import JamTestSupport

/// A JSON object read loosely, for asserting on bodies as the app's decoders see them.
typealias JSONObject = [String: Any]

extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }
    func int(_ key: String) -> Int? { (self[key] as? NSNumber)?.intValue }
    func bool(_ key: String) -> Bool? { self[key] as? Bool }
    func object(_ key: String) -> JSONObject? { self[key] as? JSONObject }
    func objects(_ key: String) -> [JSONObject]? { self[key] as? [JSONObject] }
    /// True when `key` is present with JSON `null`.
    func isNull(_ key: String) -> Bool { self[key] is NSNull }
}

/// One HTTP answer.
struct Answer: Sendable, CustomStringConvertible {
    let status: Int
    let body: Data
    let requestId: String?
    /// A 429's wait, in seconds.
    var retryAfter: String? = nil
    /// The methods a 405 names (its backend's handler names none).
    var allow: String? = nil

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONObject? { (try? JSONSerialization.jsonObject(with: body)) as? JSONObject }
    /// Its error handlers' words (`{"error": …}`).
    var error: String? { json?.string("error") }
    var description: String { "\(status) \(text)" }
}

/// A guest signed in with OpenJam's `POST /auth/guest`.
struct Guest: Sendable {
    let id: String
    let name: String
    let token: String
}

/// QueueIT's REST surface as its app calls it (`QueueAPIService`), over URLSession.
struct QueueITAPI: Sendable {
    let base: String

    func request(_ method: String, _ path: String, token: String?, body: Data? = nil, headers: [String: String] = [:]) async throws -> Answer {
        guard let url = URL(string: base + path) else { throw TestFailure("bad URL \(base + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 10
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body, method != "GET", method != "DELETE" {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestFailure("not an HTTP answer for \(method) \(path)") }
        return Answer(
            status: http.statusCode, body: data, requestId: http.value(forHTTPHeaderField: "X-Request-ID"),
            retryAfter: http.value(forHTTPHeaderField: "Retry-After"), allow: http.value(forHTTPHeaderField: "Allow"))
    }

    func send(_ method: String, _ path: String, as guest: Guest?, json: Any) async throws -> Answer {
        try await request(method, path, token: guest?.token, body: try JSONSerialization.data(withJSONObject: json))
    }

    func send(_ method: String, _ path: String, as guest: Guest?, text: String) async throws -> Answer {
        try await request(method, path, token: guest?.token, body: Data(text.utf8))
    }

    func signIn(_ name: String) async throws -> Guest {
        let answer = try await send("POST", "/auth/guest", as: nil, json: ["displayName": name])
        guard answer.status == 201, let json = answer.json, let id = json.string("userId"), let token = json.string("token") else {
            throw TestFailure("POST /auth/guest for \(name) failed: \(answer)")
        }
        return Guest(id: id, name: name, token: token)
    }

    func create(_ guest: Guest, code: String) async throws -> Answer {
        try await send("POST", "/api/v1/sessions/create", as: guest, json: ["join_code": code])
    }

    func join(_ guest: Guest, code: String) async throws -> Answer {
        try await send("POST", "/api/v1/sessions/join", as: guest, json: ["join_code": code])
    }

    func current(_ guest: Guest) async throws -> Answer {
        try await request("GET", "/api/v1/sessions/current", token: guest.token)
    }

    func leave(_ guest: Guest) async throws -> Answer {
        try await request("POST", "/api/v1/sessions/leave", token: guest.token)
    }

    func control(_ guest: Guest, _ body: JSONObject) async throws -> Answer {
        try await send("PATCH", "/api/v1/sessions/control_session", as: guest, json: body)
    }

    func requestSkip(_ guest: Guest) async throws -> Answer {
        try await request("POST", "/api/v1/sessions/request_skip", token: guest.token)
    }

    func songFinished(_ guest: Guest) async throws -> Answer {
        try await request("POST", "/api/v1/sessions/song_finished", token: guest.token)
    }

    func add(_ guest: Guest, _ song: JSONObject) async throws -> Answer {
        try await send("POST", "/api/v1/songs/add", as: guest, json: song)
    }

    /// Votes as the app does: the queued song's id as `UUID.uuidString`, upper case.
    func vote(_ guest: Guest, _ songId: String, _ value: Int) async throws -> Answer {
        try await send("POST", "/api/v1/songs/\(songId.uppercased())/vote", as: guest, json: ["vote_value": value])
    }

    func unvote(_ guest: Guest, _ songId: String) async throws -> Answer {
        try await request("DELETE", "/api/v1/songs/\(songId.uppercased())/vote", token: guest.token)
    }

    // MARK: Requiring success

    func ok(_ answer: Answer, _ what: String) throws -> JSONObject {
        guard answer.status == 200, let json = answer.json else { throw TestFailure("\(what) failed: \(answer)") }
        return json
    }

    /// Creates a session with `code`, returning its id.
    func hosting(_ guest: Guest, code: String) async throws -> String {
        let json = try ok(try await create(guest, code: code), "create \(code)")
        guard let id = json.object("session")?.string("id") else { throw TestFailure("no session id in \(json)") }
        return id
    }

    /// Ann hosts a session with the code PARTY and Bob has joined it.
    func party() async throws -> (ann: Guest, bob: Guest) {
        let ann = try await signIn("Ann")
        let bob = try await signIn("Bob")
        _ = try await hosting(ann, code: "PARTY")
        _ = try ok(try await join(bob, code: "PARTY"), "join")
        return (ann, bob)
    }

    /// Ann hosts a session with the code PARTY that Bob, Cat and Dan have joined.
    func partyOfFour() async throws -> (ann: Guest, bob: Guest, cat: Guest, dan: Guest) {
        let (ann, bob) = try await party()
        let cat = try await signIn("Cat")
        let dan = try await signIn("Dan")
        for guest in [cat, dan] { _ = try ok(try await join(guest, code: "PARTY"), "join") }
        return (ann, bob, cat, dan)
    }

    /// Adds `song`, returning the queued song's id.
    func added(_ guest: Guest, _ song: JSONObject) async throws -> String {
        let json = try ok(try await add(guest, song), "add")
        guard let id = json.string("id") else { throw TestFailure("no id in \(json)") }
        return id
    }
}

/// The body the app's `AddSongRequest` sends: all eight keys, `""` for a missing isrc or image.
func song(_ n: Int, isrc: String = "", image: String = "", source: String = "spotify", durationMs: Int = 200_000) -> JSONObject {
    [
        "id": "track\(n)", "isrc": isrc, "name": "Song \(n)", "artists": "Artist \(n)", "album": "Album \(n)",
        "duration_ms": durationMs, "image_url": image, "source": source,
    ]
}

/// `jam serve --profile queueit` in this process, on an ephemeral loopback port.
enum QueueITServer {
    static func with(
        dataDirectory: URL? = nil, rateLimits: RateLimits = RateLimits(), _ body: @Sendable (QueueITAPI, TestServer) async throws -> Void
    ) async throws {
        try await TestServer.with(dataDirectory: dataDirectory, configure: { $0.profile = QueueITProfile(); $0.rateLimits = rateLimits }) { server in
            try await body(QueueITAPI(base: server.baseURL), server)
        }
    }
}

/// The profile for tests that build their own `TestServer`.
enum QueueITProfileForTests {
    static func make() -> QueueITProfile { QueueITProfile() }
}
