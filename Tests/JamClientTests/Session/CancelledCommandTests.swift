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
}
