import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import NIOSSL
import Synchronization
import Testing

/// `NIOWebSocketTransport` where the opening or the end does not go as planned: a connection
/// that is never made or refused, a server that takes the connection and never answers the
/// upgrade, a caller that gives up meanwhile, a server that answers with something other than
/// a WebSocket; a socket abandoned, closed from a cancelled task, or whose close goes
/// unanswered. (Open sockets are what the SDK's end-to-end tests run on, and TLS below.)
struct NIOTransportTests {
    /// The address of a session's socket on a loopback port (nobody's session).
    static func socketURL(port: Int) throws -> URL {
        try #require(URL(string: "ws://127.0.0.1:\(port)/api/v1/sessions/none/realtime"))
    }

    /// Cancels `opening` and checks that it stops at once, with `CancellationError`.
    static func expectStopsAtOnce(cancelling opening: Task<RealtimeClose, any Error>, sourceLocation: SourceLocation = #_sourceLocation) async {
        let cancelled = ContinuousClock.now
        opening.cancel()
        let result = await opening.result
        let took = ContinuousClock.now - cancelled
        #expect(throws: CancellationError.self, sourceLocation: sourceLocation) { try result.get() }
        #expect(took < .seconds(5), "stopped \(took) after the cancel", sourceLocation: sourceLocation)
    }

    @Test("an upgrade the server never answers fails the open once its time is up", .timeLimit(.minutes(1)))
    func anUpgradeTheServerNeverAnswersFailsTheOpenOnceItsTimeIsUp() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                relay.holdWhenClientSends("GET ")
                let started = ContinuousClock.now
                let error = await #expect(throws: WebSocketOpenError.self) {
                    _ = try await NIOWebSocketTransport(openTimeout: .seconds(1)).withSocket(url: try Self.socketURL(port: relay.port), headers: [:]) { _ in
                        Issue.record("a socket opened, though the server never answered")
                    }
                }
                let took = ContinuousClock.now - started
                #expect(relay.isHolding, "the relay held the upgrade request")
                #expect(error?.description.contains("did not open within") == true, "\(String(describing: error))")
                #expect(took >= .seconds(1) && took < .seconds(10), "failed after \(took)")
            }
        }
    }

    @Test("a caller cancelled while the upgrade is pending stops waiting at once", .timeLimit(.minutes(1)))
    func aCallerCancelledWhileTheUpgradeIsPendingStopsWaitingAtOnce() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                relay.holdWhenClientSends("GET ")
                let url = try Self.socketURL(port: relay.port)
                let opening = Task {
                    try await NIOWebSocketTransport(openTimeout: .seconds(600)).withSocket(url: url, headers: [:]) { _ in }
                }
                try await eventually("the upgrade request held", timeout: .seconds(10)) { relay.isHolding }
                await Self.expectStopsAtOnce(cancelling: opening)
            }
        }
    }

    @Test("a connection that is never made fails the open once its time is up", .timeLimit(.minutes(1)))
    func aConnectionThatIsNeverMadeFailsTheOpenOnceItsTimeIsUp() async throws {
        try await FullListener.with { listener in
            let url = try Self.socketURL(port: listener.port)
            let started = ContinuousClock.now
            let error = await #expect(throws: WebSocketOpenError.self) {
                _ = try await NIOWebSocketTransport(openTimeout: .milliseconds(300)).withSocket(url: url, headers: [:]) { _ in
                    Issue.record("a socket opened on a connection that was never made")
                }
            }
            let took = ContinuousClock.now - started
            #expect(error?.description.contains("did not open within") == true, "\(String(describing: error))")
            // NIO's own connect limit is 10 s: the open's limit covers the connect too.
            #expect(took >= .milliseconds(300) && took < .seconds(5), "failed after \(took)")
        }
    }

    @Test("a caller cancelled while the connection is being made stops waiting at once and calls the connect off", .timeLimit(.minutes(1)))
    func aCallerCancelledWhileTheConnectionIsBeingMadeStopsWaitingAtOnce() async throws {
        try await FullListener.with { listener in
            let url = try Self.socketURL(port: listener.port)
            let opening = Task {
                try await NIOWebSocketTransport(openTimeout: .seconds(600)).withSocket(url: url, headers: [:]) { _ in }
            }
            try await eventually("the connect is under way: \(listener.sockets)", timeout: .seconds(20)) { try listener.connectsUnderWay() == 1 }
            await Self.expectStopsAtOnce(cancelling: opening)
            // Not left to run until the open's 600 s are up.
            try await eventually("the connect is called off", timeout: .seconds(5)) { try listener.connectsUnderWay() == 0 }
        }
    }

    @Test("a port nobody listens on fails the open with an error that names the address")
    func aPortNobodyListensOnFailsTheOpenWithAnErrorThatNamesTheAddress() async throws {
        // Below the ephemeral range: no other test's connection takes it meanwhile.
        let port = try LoopbackPort.forRestarts()
        let url = try Self.socketURL(port: port)
        let error = await #expect(throws: WebSocketOpenError.self) {
            _ = try await NIOWebSocketTransport().withSocket(url: url, headers: [:]) { _ in }
        }
        #expect(error?.description.contains("could not connect to ws://127.0.0.1:\(port)/") == true, "\(String(describing: error))")
    }

    @Test("a server that answers the upgrade with something else fails the open with an error that says so")
    func aServerThatAnswersTheUpgradeWithSomethingElseFailsTheOpen() async throws {
        try await TestServer.with { server in
            let url = try #require(URL(string: server.wsBaseURL + "/no-such-socket"))
            let error = await #expect(throws: WebSocketOpenError.self) {
                _ = try await NIOWebSocketTransport().withSocket(url: url, headers: [:]) { _ in }
            }
            #expect(error?.description.contains("did not upgrade the connection") == true, "\(String(describing: error))")
        }
    }

    @Test("a refused upgrade closes the connection it came on", .timeLimit(.minutes(1)))
    func aRefusedUpgradeClosesTheConnectionItCameOn() async throws {
        try await RefusingServer.with { server in
            let url = try Self.socketURL(port: server.port)
            let error = await #expect(throws: WebSocketOpenError.self) {
                _ = try await NIOWebSocketTransport().withSocket(url: url, headers: [:]) { _ in }
            }
            #expect(error?.description.contains("did not upgrade the connection") == true, "\(String(describing: error))")
            // The server keeps its end open: only the client's close ends the connection.
            try await eventually("the client closed its connection", timeout: .seconds(5)) { server.connectionsClosedByClient == 1 }
        }
    }

    @Test("an address that is not a WebSocket's is refused before any connection")
    func anAddressThatIsNotAWebSocketsIsRefused() async throws {
        let error = await #expect(throws: WebSocketOpenError.self) {
            _ = try await NIOWebSocketTransport().withSocket(url: try #require(URL(string: "ftp://127.0.0.1:9/realtime")), headers: [:]) { _ in }
        }
        #expect(error?.description.contains("is not a WebSocket address") == true, "\(String(describing: error))")
    }

    @Test("a member's client whose first upgrade goes unanswered connects on its next attempt", .timeLimit(.minutes(1)))
    func aClientWhoseFirstUpgradeGoesUnansweredConnectsOnItsNextAttempt() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                var api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:\(relay.port)")))
                let identity = try await api.signIn(displayName: "Ann")
                let view = try await api.createSession()
                // Only the first connection that asks for an upgrade is held.
                relay.holdWhenClientSends("Upgrade")
                let client = SessionClient(
                    api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(openTimeout: .seconds(3)),
                    backoff: Backoff(baseMs: 20, capMs: 100), seed: 7)
                let updates = await client.subscribe()
                let reasons = Mutex<[String]>([])
                let running = Task { try await client.run() }
                defer { running.cancel() }
                let watching = Task {
                    for await update in updates {
                        if case .phase(.retrying(_, _, let reason)) = update { reasons.withLock { $0.append(reason) } }
                    }
                }
                defer { watching.cancel() }
                try await eventually("connected", timeout: .seconds(20)) { await client.phase == .connected }
                #expect(relay.isHolding, "the first upgrade was held")
                let retried = reasons.withLock { $0 }
                #expect(retried.first?.contains("did not open within") == true, "\(retried)")
                let ack = try await client.send(.addToQueue(AddToQueue(track: song(1), nonce: "n-1")))
                #expect(ack.itemId != nil, "the second socket takes commands")
            }
        }
    }

    /// A certificate for localhost and 127.0.0.1, valid until 2126, and its key
    /// (Tests/Fixtures/TLS), for a relay that ends TLS in front of the test server.
    static func localhostTLS() throws -> (server: NIOSSLContext, certificate: NIOSSLCertificate) {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/TLS")
        let certificate = try NIOSSLCertificate(file: folder.appendingPathComponent("localhost.crt").path, format: .pem)
        let key = try NIOSSLPrivateKey(file: folder.appendingPathComponent("localhost.key").path, format: .pem)
        let server = try NIOSSLContext(configuration: .makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key)))
        return (server, certificate)
    }

    /// A TLS client configuration that trusts `certificate`.
    static func trusting(_ certificate: NIOSSLCertificate) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([certificate])
        // TLS's own close waits this long (5 s by default) for the server's close_notify: as
        // long as the 30 s a close waits for its answer, so a test that a socket ends at once,
        // or when its close timeout runs out, can allow a loaded machine seconds of slack and
        // still fail on either wait.
        configuration.shutdownTimeout = .seconds(30)
        return configuration
    }

    /// Ann signs in and opens a session: the session and her token.
    static func annsSession(on server: TestServer) async throws -> (SessionView, String) {
        var api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:\(server.port)")))
        _ = try await api.signIn(displayName: "Ann")
        let view = try await api.createSession()
        return (view, try #require(api.token))
    }

    @Test("a wss address is opened over TLS, the socket carries the session, and a close is answered at once", .timeLimit(.minutes(1)))
    func aWSSAddressIsOpenedOverTLS() async throws {
        let tls = try Self.localhostTLS()
        try await TestServer.with { server in
            let (view, token) = try await Self.annsSession(on: server)
            try await SilentRelay.with(to: server.port, tls: tls.server) { relay in
                let trusting = Self.trusting(tls.certificate)
                // By name, and by address (checked against the certificate's IP entry).
                for host in ["localhost", "127.0.0.1"] {
                    let url = try #require(URL(string: "wss://\(host):\(relay.port)/api/v1/sessions/\(view.session.id)/realtime"))
                    let first = Mutex<String?>(nil)
                    let opened = ContinuousClock.now
                    let transport = NIOWebSocketTransport(closeTimeout: .seconds(30), tlsConfiguration: trusting)
                    let close = try await transport.withSocket(url: url, headers: ["Authorization": "Bearer \(token)"]) { socket in
                        let text = try await socket.receive()
                        first.withLock { $0 = text }
                    }
                    // The client's close is answered by the server's: not a wait for the whole
                    // close timeout, as when the client stopped reading once it sent its close.
                    let took = ContinuousClock.now - opened
                    #expect(took < .seconds(10), "\(host): opened and closed in \(took)")
                    #expect(close.code == 1000, "\(host): \(close)")
                    let text = try #require(first.withLock { $0 }, "\(host): the server sent nothing")
                    #expect(text.contains("\"stateSync\""), "\(host): \(text.prefix(200))")
                }
            }
        }
    }

    /// How long a socket to Ann's session, through a relay (over TLS when `secure`), takes to
    /// end once `ending` starts to end it, after the socket's first message, and the close it
    /// ended with. An error from `ending` ends the body with it; one from `withSocket` is
    /// thrown on.
    static func timeToEnd(
        secure: Bool, closeTimeout: Duration, on server: TestServer,
        _ ending: @escaping @Sendable (any RealtimeSocket, SilentRelay) async throws -> Void
    ) async throws -> (took: Duration, close: RealtimeClose) {
        let tls = try localhostTLS()
        let (view, token) = try await annsSession(on: server)
        return try await SilentRelay.with(to: server.port, tls: secure ? tls.server : nil) { relay in
            let url = try #require(URL(string: "\(secure ? "wss" : "ws")://127.0.0.1:\(relay.port)/api/v1/sessions/\(view.session.id)/realtime"))
            let transport = NIOWebSocketTransport(closeTimeout: closeTimeout, tlsConfiguration: trusting(tls.certificate))
            let started = Mutex<ContinuousClock.Instant?>(nil)
            let close = try await transport.withSocket(url: url, headers: ["Authorization": "Bearer \(token)"]) { socket in
                _ = try await socket.receive()
                started.withLock { $0 = .now }
                try await ending(socket, relay)
            }
            return (ContinuousClock.now - (try #require(started.withLock { $0 }, "the socket opened")), close)
        }
    }

    @Test("an abandoned socket ends at once, whether or not the server still answers, over TLS too", .timeLimit(.minutes(1)))
    func anAbandonedSocketEndsAtOnce() async throws {
        try await TestServer.with { server in
            for secure in [false, true] {
                for silent in [true, false] {
                    // A close waits 30 s for its answer here, and TLS's own close too. A server
                    // that still answers may end a socket at once even without the cut (whichever
                    // comes first wins); the silent runs are the ones that hold the cut.
                    let (took, close) = try await Self.timeToEnd(secure: secure, closeTimeout: .seconds(30), on: server) { socket, relay in
                        if silent { relay.silenceOpenConnections() }
                        await socket.abandon()
                    }
                    // No close frame went out, so none came back.
                    #expect(close.code == nil, "\(secure ? "TLS" : "TCP"), \(silent ? "silent" : "answering"): \(close)")
                    #expect(took < .seconds(10), "\(secure ? "TLS" : "TCP"), \(silent ? "silent" : "answering"): ended \(took) after it was abandoned")
                }
            }
        }
    }

    @Test("a close from a cancelled task ends the socket at once, over TLS too", .timeLimit(.minutes(1)))
    func aCloseFromACancelledTaskEndsTheSocketAtOnce() async throws {
        try await TestServer.with { server in
            for secure in [false, true] {
                // The close would wait 30 s for an answer to a close frame that was never sent.
                let (took, close) = try await Self.timeToEnd(secure: secure, closeTimeout: .seconds(30), on: server) { socket, _ in
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            // A cancelled task may not write; its close must still end the socket.
                            withUnsafeCurrentTask { $0?.cancel() }
                            await socket.close()
                        }
                    }
                }
                #expect(close.code == nil, "\(secure ? "TLS" : "TCP"): \(close)")
                #expect(took < .seconds(10), "\(secure ? "TLS" : "TCP"): ended \(took) after the close")
            }
        }
    }

    @Test("a close the server does not answer ends when the close timeout runs out, over TLS too", .timeLimit(.minutes(1)))
    func aCloseTheServerDoesNotAnswerEndsWhenTheCloseTimeoutRunsOut() async throws {
        try await TestServer.with { server in
            for secure in [false, true] {
                let (took, close) = try await Self.timeToEnd(secure: secure, closeTimeout: .seconds(1), on: server) { socket, relay in
                    relay.silenceOpenConnections()
                    await socket.close()
                }
                // The close timeout (1 s), and not TLS's own wait for its close (30 s) after it.
                #expect(close.code == nil, "\(secure ? "TLS" : "TCP"): \(close)")
                #expect(took >= .seconds(1) && took < .seconds(10), "\(secure ? "TLS" : "TCP"): ended \(took) after the close")
            }
        }
    }

    struct BodyFailure: Error {}

    @Test("the body's error is what the socket ends with, whether or not the server answers the close, over TLS too", .timeLimit(.minutes(1)))
    func theBodysErrorIsWhatTheSocketEndsWith() async throws {
        try await TestServer.with { server in
            for secure in [false, true] {
                for silent in [false, true] {
                    // Cut beneath TLS, the connection's end must not stand in for the caller's error.
                    await #expect(throws: BodyFailure.self, "\(secure ? "TLS" : "TCP"), \(silent ? "silent" : "answering")") {
                        _ = try await Self.timeToEnd(secure: secure, closeTimeout: .seconds(1), on: server) { _, relay in
                            if silent { relay.silenceOpenConnections() }
                            throw BodyFailure()
                        }
                    }
                }
            }
        }
    }

    @Test("an answered close ends at once, also when the connection stays open after the answer, over TLS too", .timeLimit(.minutes(1)))
    func anAnsweredCloseEndsAtOnceAlsoWhenTheConnectionStaysOpenAfterTheAnswer() async throws {
        try await TestServer.with { server in
            for secure in [false, true] {
                for lingering in [false, true] {
                    // The close waits 30 s for its answer here. The server answers at once; with
                    // `lingering`, a proxy between keeps the connection open 20 s after that.
                    let (took, close) = try await Self.timeToEnd(secure: secure, closeTimeout: .seconds(30), on: server) { socket, relay in
                        if lingering { relay.lingerAfterServerCloses(for: .seconds(20)) }
                        await socket.close()
                    }
                    // Once the close frames are exchanged, nothing waits for the connection's end:
                    // not TLS's own close (30 s), nor the proxy.
                    #expect(close.code == 1000, "\(secure ? "TLS" : "TCP"), \(lingering ? "lingering" : "closed"): \(close)")
                    #expect(took < .seconds(10), "\(secure ? "TLS" : "TCP"), \(lingering ? "lingering" : "closed"): ended \(took) after the close")
                }
            }
        }
    }

    @Test("a server whose certificate the client does not trust fails the open", .timeLimit(.minutes(1)))
    func aServerWhoseCertificateTheClientDoesNotTrustFailsTheOpen() async throws {
        let tls = try Self.localhostTLS()
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port, tls: tls.server) { relay in
                let url = try #require(URL(string: "wss://localhost:\(relay.port)/api/v1/sessions/none/realtime"))
                let error = await #expect(throws: WebSocketOpenError.self) {
                    _ = try await NIOWebSocketTransport().withSocket(url: url, headers: [:]) { _ in
                        Issue.record("a socket opened to a server the client does not trust")
                    }
                }
                #expect(error?.description.contains("could not be opened: handshakeFailed") == true, "\(String(describing: error))")
            }
        }
    }
}
