import Foundation
import Synchronization
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// When `SessionClient` drops a socket that looks open, against a scripted socket and a clock the
/// test moves: only a ping left unanswered through a silence counts, and a socket that stays
/// quiet, or a command that waits, makes the client send one.
@Suite(.timeLimit(.minutes(1))) struct ConnectionWatchTests {
    /// A client on `socket` whose watch looks every 20 ms (real time) at the virtual `clock`.
    static func client(_ socket: ScriptedSocket, clock: ManualClock) throws -> SessionClient {
        let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")))
        return SessionClient(
            api: api, sessionId: "session", me: "host", transport: ScriptedTransport(socket: socket),
            watch: ConnectionWatch(openLimitMs: 10_000, silenceLimitMs: 6_000, checkEveryMs: 20), seed: 1, clock: clock)
    }

    /// Runs `body` with a client that is connected (its first ping answered).
    static func connected(_ body: (ScriptedSocket, SessionClient, ManualClock) async throws -> Void) async throws {
        let socket = ScriptedSocket()
        let clock = ManualClock()
        let client = try Self.client(socket, clock: clock)
        let running = Task { try await client.run() }
        defer { running.cancel() }
        try await eventually("the socket's first ping") {
            try await socket.commands().contains { if case .ping = $0 { true } else { false } }
        }
        try await socket.answerPings()
        try await eventually("connected") { await client.phase == .connected }
        try await body(socket, client, clock)
    }

    @Test("a ping unanswered through 6 s of silence closes the socket")
    func aPingUnansweredThroughTheSilenceClosesTheSocket() async throws {
        try await Self.connected { socket, client, clock in
            #expect(await client.post(.ping(Ping(clientSendTime: 1))))
            clock.advance(by: 5_000)
            try await Task.sleep(for: .milliseconds(100))
            #expect(await !socket.isClosed, "not yet: 5 s")
            clock.advance(by: 1_500)
            try await eventually("closed", timeout: .seconds(5)) { await socket.isClosed }
        }
    }

    @Test("a quiet socket with every ping answered stays open")
    func aQuietSocketWithEveryPingAnsweredStaysOpen() async throws {
        try await Self.connected { socket, client, clock in
            #expect(await client.post(.ping(Ping(clientSendTime: 1))))
            try await socket.answerPings()
            try await eventually("the pong is read") { await socket.pending == 0 }
            clock.advance(by: 60_000)
            try await Task.sleep(for: .milliseconds(200))
            #expect(await !socket.isClosed)
        }
    }

    @Test("a ping the server refuses over its budget counts as answered")
    func aPingTheServerRefusesCountsAsAnswered() async throws {
        try await Self.connected { socket, client, clock in
            #expect(await client.post(.ping(Ping(clientSendTime: 1))))
            await socket.push(ServerEnvelope(event: .error(ErrorEvent(id: nil, code: .rateLimited, message: "too many clock pings at once", retryAfterMs: 500)), epoch: 0, seq: 0, timestamp: 0))
            try await eventually("the refusal is read") { await socket.pending == 0 }
            clock.advance(by: 60_000)
            try await Task.sleep(for: .milliseconds(200))
            #expect(await !socket.isClosed, "the refusal was the server's answer")
        }
    }

    /// How many pings the client has sent on `socket`.
    static func pings(_ socket: ScriptedSocket) async throws -> Int {
        try await socket.commands().count { if case .ping = $0 { true } else { false } }
    }

    @Test("a socket quiet past 15 s is probed, and dropped when the probe goes unanswered")
    func aQuietSocketIsProbedAndDroppedWhenTheProbeGoesUnanswered() async throws {
        try await Self.connected { socket, client, clock in
            #expect(try await Self.pings(socket) == 1, "only the socket's first ping")
            clock.advance(by: 14_000)
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await Self.pings(socket) == 1, "not yet: 14 s")
            clock.advance(by: 1_001)
            try await eventually("the probe") { try await Self.pings(socket) == 2 }
            clock.advance(by: 6_001)
            try await eventually("closed", timeout: .seconds(5)) { await socket.isClosed }
            #expect(try await Self.pings(socket) == 2, "one probe, not one per look")
        }
    }

    @Test("a probe stuck in a full send buffer does not stop the watch from dropping the socket")
    func aProbeStuckInTheSendDoesNotStopTheWatch() async throws {
        try await Self.connected { socket, client, clock in
            await socket.holdSends()
            clock.advance(by: 15_001)
            try await eventually("the probe") { try await Self.pings(socket) == 2 }
            clock.advance(by: 6_001)
            try await eventually("closed", timeout: .seconds(5)) { await socket.isClosed }
        }
    }

    @Test("an answered probe keeps the socket, and its pong is not handed on as a clock sample")
    func anAnsweredProbeKeepsTheSocket() async throws {
        try await Self.connected { socket, client, clock in
            let samples = Mutex(0)
            await client.onPong { _, _ in samples.withLock { $0 += 1 } }
            clock.advance(by: 15_001)
            try await eventually("the probe") { try await Self.pings(socket) == 2 }
            try await socket.answerPings()
            try await eventually("the pong is read") { await socket.pending == 0 }
            clock.advance(by: 14_000)
            try await Task.sleep(for: .milliseconds(200))
            #expect(await !socket.isClosed)
            #expect(try await Self.pings(socket) == 2, "heard 14 s ago: no probe yet")
            #expect(samples.withLock { $0 } == 0)
        }
    }

    @Test("a command waiting past 2 s on a quiet socket sends a probe, and a dead socket is dropped in 8 s")
    func aWaitingCommandSendsAProbe() async throws {
        try await Self.connected { socket, client, clock in
            let sending = Task { try await client.send(.skip(Skip())) }
            defer { sending.cancel() }
            try await eventually("the command goes") { try await socket.commands().contains { if case .skip = $0 { true } else { false } } }
            clock.advance(by: 1_500)
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await Self.pings(socket) == 1, "not yet: 1.5 s")
            clock.advance(by: 501)
            try await eventually("the probe") { try await Self.pings(socket) == 2 }
            clock.advance(by: 6_001)
            try await eventually("closed", timeout: .seconds(5)) { await socket.isClosed }
        }
    }
}
