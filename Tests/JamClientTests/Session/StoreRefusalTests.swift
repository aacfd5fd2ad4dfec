import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// How `SessionStore` hands the server's refusals to an app: each one once, as its own, and
/// none for commands the end of the session cut off (the phase says that already).
@Suite(.timeLimit(.minutes(1))) struct StoreRefusalTests {
    /// The id of the `count`th `play` on the socket.
    static func play(_ count: Int, on socket: ScriptedSocket) async throws -> String {
        try await eventually("play \(count) on the socket") {
            let plays = try await socket.frames().filter { $0.command == .play }
            return plays.count >= count ? plays[count - 1].id : nil
        }
    }

    @Test("two refusals alike, one after the other, reach the app as two")
    func twoRefusalsAlikeAreTwo() async throws {
        try await withScriptedStore { socket, _, store in
            var seen: [Rejection] = []
            for count in 1...2 {
                let playing = Task { await store.perform(.play, as: "play") }
                let id = try await Self.play(count, on: socket)
                let refusal = ErrorEvent(id: id, code: .forbidden, message: "only hosts may do that")
                await socket.push(ServerEnvelope(event: .error(refusal), epoch: 0, seq: 1, timestamp: 0))
                await playing.value
                seen.append(try #require(await store.current.lastRejection))
            }
            #expect(seen.map(\.code) == [.forbidden, .forbidden])
            #expect(seen[0] != seen[1], "the second refusal looked like the first: an app would not show it")
        }
    }

    @Test("a command the session's end cut off shows no refusal of its own, and a later subscription ends at once")
    func aCommandTheEndCutOffShowsNoRefusal() async throws {
        try await withScriptedStore { socket, client, store in
            let playing = Task { await store.perform(.play, as: "play") }
            _ = try await Self.play(1, on: socket)
            await socket.push(ServerEnvelope(event: .sessionEnded(SessionEnded(reason: "the host ended it")), epoch: 0, seq: 2, timestamp: 0))
            await socket.close()
            await playing.value
            try await eventually("the client failed") { await client.phase.isFailed }
            #expect(await store.current.lastRejection == nil)
            try await eventually("the store's run over") { await store.current.phase.isFailed }
            // A screen that subscribes now gets the last snapshot, and its stream ends.
            let late = Mutex<[StoreSnapshot]?>(nil)
            let reading = Task {
                var snapshots: [StoreSnapshot] = []
                for await snapshot in await store.snapshots() { snapshots.append(snapshot) }
                late.withLock { $0 = snapshots }
            }
            defer { reading.cancel() }
            let snapshots = try await eventually("the late subscription ended") { late.withLock { $0 } }
            #expect(snapshots.count == 1)
            #expect(snapshots.first?.phase.isFailed == true)
        }
    }
}
