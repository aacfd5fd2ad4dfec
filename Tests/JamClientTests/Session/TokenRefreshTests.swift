import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

@Suite struct TokenRefreshTests {
    static let hour: Int64 = 3_600_000

    /// Someone new joins over REST, straight to the server: every member's socket hears it.
    static func joinAsSomebodyElse(_ server: TestServer, code: String, _ name: String) async throws {
        var other = JamAPI(server: try #require(URL(string: server.baseURL)))
        _ = try await other.signIn(displayName: name)
        _ = try await other.join(code: code)
    }

    @Test("a client swaps its token at half its life, so it reconnects after the first one expired", .timeLimit(.minutes(1)))
    func aClientSwapsItsTokenAtHalfItsLifeSoItReconnectsAfterTheFirstOneExpired() async throws {
        let clock = ShiftedClock()
        try await TestServer.with(clock: clock, configure: { $0.tokenLifetimeMs = Self.hour }) { server in
            try await SilentRelay.with(to: server.port) { relay in
                var api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:\(relay.port)")), wallClock: { clock.now() })
                let before = clock.now()
                let identity = try await api.signIn(displayName: "Ann")
                let firstToken = try #require(api.token)
                let due = try #require(api.tokenRefreshAt)
                #expect(due >= before + Self.hour / 2 && due <= clock.now() + Self.hour / 2, "due at half its life")
                let view = try await api.createSession()
                let client = SessionClient(
                    api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(),
                    backoff: Backoff(baseMs: 20, capMs: 100), seed: 7)
                let updates = await client.subscribe()
                let fresh = Mutex<[GuestAuthResponse]>([])
                let connections = Mutex(0)
                let running = Task { try await client.run() }
                defer { running.cancel() }
                let watching = Task {
                    for await update in updates {
                        if case .token(let answer, _) = update { fresh.withLock { $0.append(answer) } }
                        if case .phase(.connected) = update { connections.withLock { $0 += 1 } }
                    }
                }
                defer { watching.cancel() }
                try await eventually("connected") { await client.phase == .connected }
                let swappedEarly = fresh.withLock { $0.count }
                #expect(swappedEarly == 0, "a token half a life from its end is not swapped")

                // Half its life later the connection drops: the client swaps the token first.
                clock.advance(byMs: Double(Self.hour / 2 + 60_000))
                relay.cutWhenServerSends("memberJoined")
                try await Self.joinAsSomebodyElse(server, code: view.session.joinCode, "Bea")
                try await eventually("the connection was cut") { relay.hasCut }
                try await eventually("a fresh token", timeout: .seconds(20)) { fresh.withLock { !$0.isEmpty } }
                try await eventually("connected again", timeout: .seconds(20)) { connections.withLock { $0 } >= 2 }
                let first = fresh.withLock { $0.first }
                let swapped = try #require(first)
                #expect(swapped.userId == identity.userId && swapped.token != firstToken)
                #expect(await client.api.token == swapped.token)

                // The first token has expired by the next drop; the client still gets back in.
                clock.advance(byMs: Double(Self.hour / 2 + 60_000))
                relay.cutWhenServerSends("memberJoined")
                try await Self.joinAsSomebodyElse(server, code: view.session.joinCode, "Cy")
                try await eventually("the connection was cut again") { relay.hasCut }
                try await eventually("connected after the first token expired", timeout: .seconds(20)) { connections.withLock { $0 } >= 3 }
                let ack = try await client.send(.addToQueue(AddToQueue(track: song(1), nonce: "n-1")))
                #expect(ack.itemId != nil, "the member is still signed in")
            }
        }
    }

    @Test("a token given without its refresh time is swapped before the first connection")
    func aTokenGivenWithoutItsRefreshTimeIsDueAtOnce() async throws {
        let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")), token: "kept", wallClock: { 1_000 })
        #expect(api.tokenRefreshIsDue)
        let kept = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")), token: "kept", tokenRefreshAt: 2_000, wallClock: { 1_000 })
        #expect(!kept.tokenRefreshIsDue)
        #expect(!JamAPI(server: try #require(URL(string: "http://127.0.0.1:9"))).tokenRefreshIsDue, "no token, nothing to swap")
    }
}
