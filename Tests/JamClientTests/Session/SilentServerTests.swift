import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Testing

/// A socket that still looks open after the server went silent is dropped and replaced, as
/// `ConnectionWatch` says; a quiet session keeps its socket.
struct SilentServerTests {
    /// The watch's silence at a tenth of its default or less, so a test sees it act within a
    /// second; the open limit left at 5 s for a loaded machine's slow starts.
    static let quickWatch = ConnectionWatch(openLimitMs: 5_000, silenceLimitMs: 400, checkEveryMs: 100)

    /// A member's client connected through `relay`, running while `body` runs.
    static func withClient(
        through relay: SilentRelay, _ body: @Sendable (SessionClient, AsyncStream<ClientUpdate>) async throws -> Void
    ) async throws {
        var api = JamAPI(server: URL(string: "http://127.0.0.1:\(relay.port)")!)
        let identity = try await api.signIn(displayName: "Ann")
        let view = try await api.createSession()
        let client = SessionClient(
            api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(closeTimeout: .milliseconds(200)),
            backoff: Backoff(baseMs: 20, capMs: 100), watch: quickWatch, seed: 7)
        let updates = await client.subscribe()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            try await eventually("connected", timeout: .seconds(5), until: { await client.phase == .connected })
            try await body(client, updates)
            group.cancelAll()
        }
    }

    @Test("a socket the server stops answering on is dropped once a ping goes unanswered, and a new one takes commands")
    func aSocketTheServerStopsAnsweringOnIsReplaced() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                try await Self.withClient(through: relay) { client, updates in
                    let sockets = relay.connectionCount
                    relay.silenceOpenConnections()
                    let silenced = ContinuousClock.now
                    // What the clock sync sends now and then; on a dead path it gets no pong.
                    #expect(await client.post(.ping(Ping(clientSendTime: 1))))
                    // Bounded: without the watch the socket would sit there for minutes.
                    let reason = try await withThrowingTaskGroup(of: String?.self) { group in
                        group.addTask {
                            // Only the watch's drop: on a loaded machine the server may also
                            // have closed a socket whose pong to its own ping came late.
                            var reason: String?
                            for await update in updates {
                                if case .phase(.retrying(_, _, let why)) = update, why.contains("the server stopped answering") { reason = why }
                                if reason != nil, case .phase(.connected) = update { break }
                            }
                            return reason
                        }
                        group.addTask {
                            try await Task.sleep(for: .seconds(20))
                            throw TestFailure("the silent socket was not replaced within 20 s")
                        }
                        defer { group.cancelAll() }
                        return try await group.next() ?? nil
                    }
                    let took = ContinuousClock.now - silenced
                    #expect(reason?.contains("the server stopped answering") == true, "\(reason ?? "no retry")")
                    // 400 ms of silence, a 100 ms look, a 200 ms close: about a second on a quiet
                    // machine. TCP alone would wait for minutes (here, until the server's own check
                    // closed the socket after 90 s).
                    #expect(took < .seconds(10), "replaced after \(took)")
                    #expect(relay.connectionCount > sockets, "a new connection")
                    let ack = try await client.send(.addToQueue(AddToQueue(track: song(1), nonce: "n-1")))
                    #expect(ack.itemId != nil, "the new socket takes commands")
                }
            }
        }
    }

    @Test("a quiet session keeps its socket, however long nothing comes")
    func aQuietSessionKeepsItsSocket() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                try await Self.withClient(through: relay) { client, updates in
                    // Seven times the silence limit with nothing from the server and no ping
                    // waiting. (Answered pings are ConnectionWatchTests': here a loaded machine
                    // could take longer than these short limits over a pong.) Only the watch's
                    // drops count: on a loaded machine the server may close a socket itself.
                    let drops = try await withThrowingTaskGroup(of: [String]?.self) { group in
                        group.addTask {
                            var drops: [String] = []
                            for await update in updates {
                                if case .phase(.retrying(_, _, let why)) = update, why.contains("the server stopped answering") || why.contains("the server did not answer") { drops.append(why) }
                            }
                            return drops
                        }
                        group.addTask {
                            try await Task.sleep(for: .milliseconds(2_800))
                            return nil
                        }
                        _ = try await group.next()
                        group.cancelAll()
                        var drops: [String] = []
                        while let result = try await group.next() { drops += result ?? [] }
                        return drops
                    }
                    #expect(drops.isEmpty, "the watch dropped a quiet socket: \(drops)")
                }
            }
        }
    }
}
