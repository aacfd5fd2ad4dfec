import Foundation
import JamProtocol
import NIOCore
import NIOHTTP1

/// The OpenJam REST calls set-up needs, each from the next loopback source address.
struct OpenJamREST: Sendable {
    let http: LoopbackHTTP

    /// A guest identity.
    func guest(_ name: String) async throws -> GuestAuthResponse {
        try await http.json(.POST, "/auth/guest", body: GuestAuthRequest(displayName: name), from: SourceAddresses.shared.next(), as: GuestAuthResponse.self)
    }

    /// A new session hosted by `token`'s user.
    func create(_ token: String, settings: SettingsPatch) async throws -> SessionView {
        try await http.json(
            .POST, "/api/v1/sessions", token: token, body: CreateSessionRequest(name: "bench", settings: settings), from: SourceAddresses.shared.next(),
            as: SessionView.self)
    }

    /// Joins by code.
    func join(_ token: String, code: String) async throws -> SessionView {
        try await http.json(.POST, "/api/v1/sessions/join", token: token, body: JoinSessionRequest(code: code), from: SourceAddresses.shared.next(), as: SessionView.self)
    }

    /// Ends a session (host).
    func end(_ token: String, _ id: SessionID) async throws {
        let reply = try await http.send(.DELETE, "/api/v1/sessions/\(id)", token: token)
        guard reply.status == 204 else { throw LoopbackHTTP.Failure(description: "DELETE session answered \(reply.status): \(reply.text)") }
    }

    /// Reads a counter from `/metrics` (nil when the server does not export it).
    func metric(_ name: String) async throws -> Double? {
        try await metrics()?.value(name)
    }

    /// Reads `/metrics` once (nil when the server does not serve it).
    func metrics() async throws -> MetricsScrape? {
        let reply = try await http.send(.GET, "/metrics")
        guard reply.status == 200 else { return nil }
        return MetricsScrape(text: reply.text(limit: 1 << 20))
    }
}

/// A host with a session, and members who joined it.
struct BenchSession: Sendable {
    let id: SessionID
    let code: String
    /// Host first.
    let people: [GuestAuthResponse]
}

extension OpenJamREST {
    /// Creates `count` sessions of `members` people each (host included), `concurrency` requests at a time.
    /// Session `index` is created on `nodes[index % count]` and its member `m` joins on
    /// `nodes[(index + m) % count]` (one node: this one).
    func makeSessions(count: Int, members: Int, settings: SettingsPatch, concurrency: Int = 32, nodes: [OpenJamREST] = []) async throws -> [BenchSession] {
        let nodes = nodes.isEmpty ? [self] : nodes
        return try await withThrowingTaskGroup(of: (Int, BenchSession).self) { group in
            var sessions = [BenchSession?](repeating: nil, count: count)
            var next = 0
            // Sessions are built in parallel, people within a session one after another.
            let parallel = max(1, concurrency / max(1, members))
            /// Starts building session `index`: host, session, members.
            func launch(_ index: Int) {
                group.addTask {
                    let home = nodes[index % nodes.count]
                    let host = try await home.guest("host \(index)")
                    let view = try await home.create(host.token, settings: settings)
                    var people = [host]
                    for m in 1..<max(1, members) {
                        let node = nodes[(index + m) % nodes.count]
                        let person = try await node.guest("member \(index).\(m)")
                        _ = try await node.join(person.token, code: view.session.joinCode)
                        people.append(person)
                    }
                    return (index, BenchSession(id: view.session.id, code: view.session.joinCode, people: people))
                }
            }
            while next < min(count, parallel) {
                launch(next)
                next += 1
            }
            while let (index, session) = try await group.next() {
                sessions[index] = session
                if next < count {
                    launch(next)
                    next += 1
                }
            }
            return sessions.compactMap { $0 }
        }
    }
}

extension HTTPReply {
    /// The body as text up to `limit` bytes.
    func text(limit: Int) -> String { String(decoding: body.prefix(limit), as: UTF8.self) }
}
