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

    @Test("a leave whose caller stopped waiting and whose answer was lost with its socket ends the run as left")
    func aCancelledLeaveWhoseAnswerWasLostEndsTheRunAsLeft() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        await second.push(SessionClientLifecycleTests.envelope(.error(ErrorEvent(id: nil, code: .notMember, message: "not a member of this session")), seq: 0))
        await second.close()
        let refused = RealtimeClose(code: CloseCode(refusing: .notMember).rawValue, reason: "not a member of this session")
        let client = try SessionClientLifecycleTests.client(SocketsInTurn([first, second], closes: [RealtimeClose(code: nil, reason: nil), refused]))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await first.push(SessionClientLifecycleTests.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let leaving = Task { try await client.send(.leave) }
        try await eventually("the leave sent") { try await first.commands().contains(.leave) }
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        // The server applies it, and the socket drops before its answer comes.
        await first.close()
        try await running.value
        #expect(await client.phase == .idle)
        #expect(try await !second.commands().contains(.leave), "a leave its caller gave up on was sent again")
    }

    @Test("a leave whose caller stopped waiting and that never reached the server is forgotten once the member is answered again")
    func aCancelledLeaveThatNeverArrivedIsForgotten() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        let removed = RealtimeClose(code: CloseCode(refusing: .notMember).rawValue, reason: "not a member of this session")
        let client = try SessionClientLifecycleTests.client(SocketsInTurn([first, second], closes: [RealtimeClose(code: nil, reason: nil), removed]))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await first.push(SessionClientLifecycleTests.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let leaving = Task { try await client.send(.leave) }
        try await eventually("the leave sent") { try await first.commands().contains(.leave) }
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        // The socket drops before the leave reaches the server: the next one finds the member in.
        await first.close()
        try await eventually("the new socket opened") { try await !second.frames().isEmpty }
        await second.push(SessionClientLifecycleTests.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 6))
        try await eventually("connected again") { await client.phase == .connected }
        // Later the host removes the member: that is a removal, not the leave's answer.
        await second.push(SessionClientLifecycleTests.envelope(.error(ErrorEvent(id: nil, code: .notMember, message: "not a member of this session")), seq: 0))
        await second.close()
        let ended = await running.result
        guard case .failure(let error as JamError) = ended else {
            Issue.record("the run ended \(ended), not refused as not a member")
            return
        }
        #expect(error.code == .notMember)
    }
}
