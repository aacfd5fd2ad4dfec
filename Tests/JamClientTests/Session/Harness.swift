import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Testing

/// A member using the SDK as an app would: a token, a `SessionClient` and a `SessionStore`.
struct AppMember: Sendable {
    let name: String
    let me: UserID
    let api: JamAPI
    let client: SessionClient
    let store: SessionStore

    /// Signs in; `code == nil` creates a session, else joins it.
    static func make(
        _ server: TestServer, name: String, code: String? = nil, backoff: Backoff = Backoff(baseMs: 20, capMs: 200), socket: SocketKind = .nio,
        transport: (any RealtimeTransport)? = nil
    ) async throws -> (AppMember, SessionView) {
        var api = JamAPI(server: URL(string: server.baseURL)!)
        let identity = try await api.signIn(displayName: name)
        let view = if let code { try await api.join(code: code) } else { try await api.createSession() }
        let client = SessionClient(
            api: api, sessionId: view.session.id, me: identity.userId, transport: transport ?? socket.transport, backoff: backoff, seed: 7)
        return (AppMember(name: name, me: identity.userId, api: api, client: client, store: SessionStore(client: client)), view)
    }

    /// The same member on another device: the same sign-in, a client and store of its own.
    func anotherDevice(named name: String, socket: SocketKind = .nio) -> AppMember {
        let client = SessionClient(api: api, sessionId: client.sessionId, me: me, transport: socket.transport, backoff: Backoff(baseMs: 20, capMs: 200), seed: 8)
        return AppMember(name: name, me: me, api: api, client: client, store: SessionStore(client: client))
    }

    /// Waits until the store's snapshot satisfies `predicate`.
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    @discardableResult
    func until(_ description: String, timeout: Duration = .seconds(15), _ predicate: @Sendable (StoreSnapshot) -> Bool) async throws -> StoreSnapshot {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let snapshot = await store.current
            if predicate(snapshot) { return snapshot }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("\(name) timed out waiting for \(description); last snapshot: \(await store.current)")
    }
}

/// The SDK's two WebSocket transports; the end-to-end tests run over each.
enum SocketKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case nio
    case urlSession

    /// The transports this system can run. Foundation on Linux opens no WebSockets when
    /// built without libcurl's WebSocket API, as the Swift 6.3 Linux toolchains are (their
    /// FoundationNetworking imports no `curl_ws_*`); set JAM_URLSESSION_WEBSOCKETS=1 on a
    /// Linux whose Foundation has them. Elsewhere both transports run.
    static var testable: [SocketKind] {
        foundationOpensWebSockets ? allCases : [.nio]
    }

    static var foundationOpensWebSockets: Bool {
        #if canImport(FoundationNetworking)
        ProcessInfo.processInfo.environment["JAM_URLSESSION_WEBSOCKETS"] == "1"
        #else
        true
        #endif
    }

    var transport: any RealtimeTransport {
        switch self {
        case .nio: NIOWebSocketTransport()
        case .urlSession: URLSessionWebSocketTransport()
        }
    }

    var testDescription: String {
        switch self {
        case .nio: "over SwiftNIO"
        case .urlSession: "over URLSessionWebSocketTask"
        }
    }
}

/// Runs `body` while every member's client and store run; stops them afterwards.
func running<T: Sendable>(_ members: [AppMember], _ body: @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for member in members {
            group.addTask { try await member.client.run() }
            group.addTask { await member.store.run() }
        }
        for member in members {
            try await member.until("connected") { $0.phase == .connected && $0.session != nil }
        }
        let result = try await body()
        group.cancelAll()
        return result
    }
}

/// A track for tests.
func song(_ n: Int, durationMs: Int64? = 180_000) -> Track {
    Track(id: "song-\(n)", name: "Song \(n)", artist: "Band", durationMs: durationMs, source: .external)
}
