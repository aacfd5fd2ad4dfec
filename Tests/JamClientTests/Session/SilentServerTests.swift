import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// A socket that still looks open after the server went silent is dropped and replaced, as
/// `ConnectionWatch` says; a quiet session keeps its socket.
struct SilentServerTests {
    /// The watch's silence at a tenth of its default or less, so a test sees it act within a
    /// second; the open limit left at 5 s for a loaded machine's slow starts.
    static let quickWatch = ConnectionWatch(openLimitMs: 5_000, silenceLimitMs: 400, checkEveryMs: 100)

    /// A member's client connected through `relay`, running while `body` runs, and the watch's
    /// drops of its sockets.
    static func withClient(
        through relay: SilentRelay, watch: ConnectionWatch = quickWatch, transport: NIOWebSocketTransport = NIOWebSocketTransport(closeTimeout: .milliseconds(200)),
        _ body: @Sendable (SessionClient, WatchDrops) async throws -> Void
    ) async throws {
        var api = JamAPI(server: URL(string: "http://127.0.0.1:\(relay.port)")!)
        let identity = try await api.signIn(displayName: "Ann")
        let view = try await api.createSession()
        let client = SessionClient(
            api: api, sessionId: view.session.id, me: identity.userId, transport: transport,
            backoff: Backoff(baseMs: 20, capMs: 100), watch: watch, seed: 7)
        let updates = await client.subscribe()
        let drops = WatchDrops()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            group.addTask { await drops.record(updates) }
            try await eventually("connected", timeout: .seconds(20), until: { await client.phase == .connected })
            try await body(client, drops)
            group.cancelAll()
        }
    }

    @Test("a socket the server stops answering on is dropped once a ping goes unanswered, and a new one takes commands")
    func aSocketTheServerStopsAnsweringOnIsReplaced() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                try await Self.withClient(through: relay) { client, drops in
                    let sockets = relay.connectionCount
                    relay.silenceOpenConnections()
                    let silenced = ContinuousClock.now
                    // What the clock sync sends now and then; on a dead path it gets no pong.
                    #expect(await client.post(.ping(Ping(clientSendTime: 1))))
                    // Bounded: without the watch the socket would sit there for minutes.
                    try await eventually("the silent socket is replaced", timeout: .seconds(20)) { drops.replaced }
                    let took = ContinuousClock.now - silenced
                    #expect(drops.reasons.allSatisfy { $0.contains("the server stopped answering") }, "\(drops.reasons)")
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

    @Test("a silent socket is replaced without waiting out the transport's close timeout")
    func aSilentSocketIsReplacedWithoutWaitingForItsClose() async throws {
        try await TestServer.with { server in
            try await SilentRelay.with(to: server.port) { relay in
                // A close that waits 60 s for its answer: well apart from a busy machine's delays.
                try await Self.withClient(through: relay, transport: NIOWebSocketTransport(closeTimeout: .seconds(60))) { client, drops in
                    relay.silenceOpenConnections()
                    let silenced = ContinuousClock.now
                    #expect(await client.post(.ping(Ping(clientSendTime: 1))))
                    try await eventually("the silent socket is replaced", timeout: .seconds(40)) { drops.replaced }
                    // 400 ms of silence and a 100 ms look, about a second; a close waiting for
                    // its answer would add the whole 60 s.
                    let took = ContinuousClock.now - silenced
                    #expect(took < .seconds(15), "replaced after \(took)")
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
                // A silence limit of 1 s: the clock sync's own pings at the start are answered
                // within it even on a loaded machine (one took 427 ms with every suite running).
                let watch = ConnectionWatch(openLimitMs: 5_000, silenceLimitMs: 1_000, checkEveryMs: 100)
                try await Self.withClient(through: relay, watch: watch) { client, drops in
                    // Four times the silence limit with nothing from the server and no ping
                    // waiting. (Answered pings are ConnectionWatchTests'.)
                    try await Task.sleep(for: .milliseconds(4_000))
                    #expect(drops.reasons.isEmpty, "the watch dropped a quiet socket: \(drops.reasons)")
                }
            }
        }
    }
}

/// The sockets the watch dropped, as the client reports them. Only the watch's own drops
/// count: on a loaded machine the server may also close a socket whose pong to its own ping
/// came late, and the client retries that one too.
final class WatchDrops: Sendable {
    private let seen = Mutex<(reasons: [String], replaced: Bool)>(([], false))

    /// Why the watch dropped each socket so far.
    var reasons: [String] { seen.withLock { $0.reasons } }
    /// Whether a new socket connected after the watch's last drop.
    var replaced: Bool { seen.withLock { $0.replaced } }

    /// Reads `updates` until they end or the task is cancelled.
    func record(_ updates: AsyncStream<ClientUpdate>) async {
        for await update in updates {
            switch update {
            case .phase(.retrying(_, _, let why)) where why.contains("the server stopped answering") || why.contains("the server did not answer"):
                seen.withLock {
                    $0.reasons.append(why)
                    $0.replaced = false
                }
            case .phase(.connected):
                seen.withLock { $0.replaced = !$0.reasons.isEmpty }
            default:
                break
            }
        }
    }
}
