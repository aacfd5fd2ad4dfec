import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

@testable import JamClient

/// `URLSessionWebSocketTransport` where it cannot connect; the SDK's end-to-end tests in
/// `SessionClientTests` run over it wherever Foundation opens WebSockets.
@Suite struct URLSessionTransportTests {
    @Test("a socket that cannot open fails with an error that says why")
    func aSocketThatCannotOpenFailsWithAnErrorThatSaysWhy() async throws {
        try await TestServer.with { server in
            let url = try #require(URL(string: server.wsBaseURL + "/no-such-socket"))
            let error = await #expect(throws: (any Error).self) {
                _ = try await URLSessionWebSocketTransport(openTimeout: .seconds(5)).withSocket(url: url, headers: [:]) { _ in }
            }
            #expect(error is WebSocketOpenError || (error as? JamError)?.code == .internal, "\(String(describing: error))")
        }
    }

    @Test("URLSession's idle timer cannot end a quiet socket the connection watch keeps")
    func urlSessionsIdleTimerOutlastsTheConnectionWatch() throws {
        let url = try #require(URL(string: "ws://127.0.0.1:9/realtime"))
        let request = URLSessionWebSocketTransport.request(url: url, headers: ["Authorization": "Bearer t"])
        let watch = ConnectionWatch()
        // A live socket on a quiet session hears nothing until the watch's own ping is due,
        // looked for and answered; the idle timer must leave it that long and more.
        let longestQuietMs = watch.quietProbeMs + watch.checkEveryMs + watch.silenceLimitMs
        #expect(request.timeoutInterval * 1000 > 2 * longestQuietMs)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test("a handshake that never comes fails the wait once its time is up", .timeLimit(.minutes(1)))
    func aHandshakeThatNeverComesFailsTheWaitOnceItsTimeIsUp() async throws {
        let url = try #require(URL(string: "ws://127.0.0.1:9/realtime"))
        // The timer's task and the waiting one finish together: each time, the wait must fail.
        for _ in 0..<50 {
            let error = await #expect(throws: WebSocketOpenError.self) {
                try await SocketEvents().waitUntilOpen(timeout: .milliseconds(2), url: url)
            }
            #expect(error?.description.contains("did not open within") == true)
        }
    }

    @Test("a caller cancelled while the handshake is pending stops waiting at once", .timeLimit(.minutes(1)))
    func aCallerCancelledWhileTheHandshakeIsPendingStopsWaitingAtOnce() async throws {
        let url = try #require(URL(string: "ws://127.0.0.1:9/realtime"))
        let waiting = Task { try await SocketEvents().waitUntilOpen(timeout: .seconds(600), url: url) }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        let outcome = await waiting.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test("where Foundation has no WebSockets the client stops at once with a clear error", .enabled(if: !SocketKind.foundationOpensWebSockets, "Foundation here opens WebSockets"))
    func whereFoundationHasNoWebSocketsTheClientStopsAtOnceWithAClearError() async throws {
        try await TestServer.with { server in
            var api = JamAPI(server: URL(string: server.baseURL)!)
            let identity = try await api.signIn(displayName: "Hana")
            let view = try await api.createSession()
            let client = SessionClient(api: api, sessionId: view.session.id, me: identity.userId, transport: URLSessionWebSocketTransport())
            let started = ContinuousClock.now
            let error = await #expect(throws: JamError.self) { try await client.run() }
            #expect(error?.code == .internal)
            #expect(error?.message.contains("NIOWebSocketTransport") == true)
            #expect(ContinuousClock.now - started < .seconds(5), "the client retried instead of stopping")
        }
    }
}
