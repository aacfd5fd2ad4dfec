import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// How `SessionStore` hands the server's refusals to an app: each one once, as its own, and
/// none for commands the end of the session cut off (the phase says that already); a refused
/// tap takes back what it showed, not a later tap.
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

    @Test("a refused skip request takes back its own tap only, not a later one still on its way")
    func aRefusedSkipRequestTakesBackOnlyItsOwnTap() async throws {
        try await withScriptedStore { socket, _, store in
            let playing = NowPlaying(item: Fixture.item("a"), epoch: 1, state: .playing, positionMs: 0, anchorMs: 0)
            var view = Fixture.view(nowPlaying: playing)
            view.skipRequests = SkipRequestsView(count: 0, needed: 3, mine: false)
            await socket.push(ServerEnvelope(event: .stateSync(view), epoch: 1, seq: 2, timestamp: 0))
            try await eventually("song a in the store") { await store.current.nowPlaying != nil }
            // Ask, take back, ask again: three taps on their way.
            var taps: [Task<Void, Never>] = []
            for (count, asking) in [true, false, true].enumerated() {
                taps.append(Task { asking ? await store.requestSkip() : await store.withdrawSkipRequest() })
                try await eventually("tap \(count + 1) on the socket") {
                    try await socket.frames().count { [.requestSkip, .withdrawSkipRequest].contains($0.command.type) } == count + 1
                }
            }
            #expect(await store.current.skipRequests == SkipRequestsView(count: 1, needed: 3, mine: true))
            let first = try #require(try await socket.frames().first { $0.command.type == .requestSkip }?.id)
            let refusal = ErrorEvent(id: first, code: .rateLimited, message: "too many skip requests", retryAfterMs: 1_000)
            await socket.push(ServerEnvelope(event: .error(refusal), epoch: 1, seq: 2, timestamp: 0))
            await taps[0].value
            let shown = await store.current
            #expect(shown.skipRequests == SkipRequestsView(count: 1, needed: 3, mine: true), "the last tap, still on its way, was taken back")
            #expect(shown.lastRejection?.code == .rateLimited, "the member hears why the first tap failed")
            for tap in taps.dropFirst() { tap.cancel() }
        }
    }
}
