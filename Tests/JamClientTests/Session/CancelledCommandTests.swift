import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// A command whose caller stopped waiting (its task cancelled, a screen closed) after its frame
/// went out, against a scripted socket: the server applies it all the same, so its answer
/// still counts when it comes.
@Suite(.timeLimit(.minutes(1))) struct CancelledCommandTests {
    @Test("a leave whose caller stopped waiting still counts once the server answers it")
    func aLeaveWhoseCallerStoppedWaitingStillCounts() async throws {
        try await ConnectionWatchTests.connected { socket, client, _ in
            let leaving = Task { try await client.send(.leave) }
            try await eventually("the leave is out") { try await socket.frames().contains { $0.command == .leave } }
            let id = try #require(try await socket.frames().first { $0.command == .leave }?.id)
            leaving.cancel()
            let waited = await leaving.result
            #expect(throws: CancellationError.self) { try waited.get() }

            await socket.push(ServerEnvelope(event: .ack(Ack(id: id)), epoch: 0, seq: 0, timestamp: 0))
            try await eventually("the answer is read") { await socket.pending == 0 }
            // The member is out: a command now is refused at once, not sent to wait for an
            // answer the server will never give.
            let next = Task { () -> JamError? in
                do {
                    try await client.send(.play)
                    return nil
                } catch {
                    return error as? JamError
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            next.cancel()
            #expect(await next.value?.code == .notMember, "the client did not take the leave's answer")
            #expect(try await !socket.commands().contains(.play))
        }
    }

    /// A run on `first` then `second` (closed as `secondCloses`) whose member's `leave` went out
    /// on `first`, was given up by its caller, and lost its answer with `first`.
    static func leaveGivenUpThenSocketDrops(
        _ first: ScriptedSocket, _ second: ScriptedSocket, secondCloses: RealtimeClose
    ) async throws -> (SessionClient, Task<Void, any Error>) {
        let client = try SessionClientLifecycleTests.client(SocketsInTurn([first, second], closes: [RealtimeClose(code: nil, reason: nil), secondCloses]))
        let running = Task { try await client.run() }
        await first.push(SessionClientLifecycleTests.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let leaving = Task { try await client.send(.leave) }
        try await eventually("the leave sent") { try await first.commands().contains(.leave) }
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        await first.close()
        return (client, running)
    }

    static let notMember = ServerEvent.error(ErrorEvent(id: nil, code: .notMember, message: "not a member of this session"))
    static let refusedAsNotMember = RealtimeClose(code: CloseCode(refusing: .notMember).rawValue, reason: "not a member of this session")

    @Test("a leave whose caller stopped waiting and whose answer was lost with its socket ends the run as left")
    func aCancelledLeaveWhoseAnswerWasLostEndsTheRunAsLeft() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        // The server applied the leave: the next socket is refused.
        await second.push(SessionClientLifecycleTests.envelope(Self.notMember, seq: 0))
        await second.close()
        let (client, running) = try await Self.leaveGivenUpThenSocketDrops(first, second, secondCloses: Self.refusedAsNotMember)
        defer { running.cancel() }
        try await running.value
        #expect(await client.phase == .idle)
        #expect(try await !second.commands().contains(.leave), "a leave its caller gave up on was sent again")
    }

    @Test("a leave tapped again after one given up succeeds too when the next socket is refused as not a member")
    func aSecondLeaveSucceedsWithTheFirst() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        let (client, running) = try await Self.leaveGivenUpThenSocketDrops(first, second, secondCloses: Self.refusedAsNotMember)
        defer { running.cancel() }
        try await eventually("the new socket opened") { try await !second.frames().isEmpty }
        let again = Task { try await client.send(.leave) }
        try await eventually("the second leave sent") { try await second.commands().contains(.leave) }
        // The first leave was applied: the server refuses the new socket.
        await second.push(SessionClientLifecycleTests.envelope(Self.notMember, seq: 0))
        await second.close()
        try await running.value
        let answer = await again.result
        if case .failure(let error) = answer { Issue.record("the second leave failed: \(error)") }
    }

    @Test("a leave whose caller stopped waiting and that never reached the server is forgotten once the member is answered again")
    func aCancelledLeaveThatNeverArrivedIsForgotten() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        let (client, running) = try await Self.leaveGivenUpThenSocketDrops(first, second, secondCloses: Self.refusedAsNotMember)
        defer { running.cancel() }
        // The leave never reached the server: the next socket finds the member in.
        try await eventually("the new socket opened") { try await !second.frames().isEmpty }
        await second.push(SessionClientLifecycleTests.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 6))
        try await eventually("connected again") { await client.phase == .connected }
        // Later the member is refused as not a member (away too long): not the leave's answer.
        await second.push(SessionClientLifecycleTests.envelope(Self.notMember, seq: 0))
        await second.close()
        let ended = await running.result
        guard case .failure(let error as JamError) = ended else {
            Issue.record("the run ended \(ended), not refused as not a member")
            return
        }
        #expect(error.code == .notMember)
    }
}
