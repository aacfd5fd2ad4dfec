import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// A pending add in `SessionStore`: shown at once, and replaced by its item the moment the
/// item shows, which is before the server's answer (events go out before acks).
@Suite(.timeLimit(.minutes(1))) struct PendingAddTests {
    @Test("an add shows once: as a stand-in until its item arrives, then as the item, before the answer")
    func anAddShowsOnceBeforeAndAfterItsItemArrives() async throws {
        try await withScriptedStore { socket, client, store in
            let track = Fixture.track("song-1")
            let adding = Task { await store.add(track) }
            let frame = try await eventually("the add on the socket") {
                try await socket.frames().first { if case .addToQueue = $0.command { true } else { false } }
            }
            #expect(await store.current.queue.map(\.pending) == [true], "the stand-in shows at once")

            // The item arrives; its answer has not.
            let item = QueueItem(id: "item-1", track: track, addedBy: Fixture.host, addedAt: 1, score: 0, reason: "no votes")
            await socket.push(ServerEnvelope(event: .queueItemAdded(QueueItemAdded(item: item, index: 0)), epoch: 0, seq: 2, timestamp: 0))
            try await eventually("the item in the mirror") { await client.mirror.view?.queue.count == 1 }
            try await eventually("the item in the store") { await store.current.queue.contains { !$0.pending } }
            let shown = await store.current.queue
            #expect(shown.map(\.item.id) == ["item-1"], "shown once, as the item: \(shown)")

            await socket.push(ServerEnvelope(event: .ack(Ack(id: try #require(frame.id), itemId: "item-1")), epoch: 0, seq: 2, timestamp: 0))
            #expect(await adding.value == "item-1")
            #expect(await store.current.queue.map(\.item.id) == ["item-1"])
        }
    }

    @Test("the same song added twice in a row shows twice while the second add is on its way")
    func theSameSongAddedTwiceShowsTwice() async throws {
        try await withScriptedStore { socket, _, store in
            let track = Fixture.track("song-1")
            let first = Task { await store.add(track) }
            try await eventually("the first add on the socket") { try await socket.frames().count { $0.command.type == .addToQueue } == 1 }
            let second = Task { await store.add(track) }
            let frames = try await eventually("both adds on the socket") {
                let adds = try await socket.frames().filter { $0.command.type == .addToQueue }
                return adds.count == 2 ? adds : nil
            }
            // The first lands and is answered; the second is still on its way.
            let item = QueueItem(id: "item-1", track: track, addedBy: Fixture.host, addedAt: 1, score: 0, reason: "no votes")
            await socket.push(ServerEnvelope(event: .queueItemAdded(QueueItemAdded(item: item, index: 0)), epoch: 0, seq: 2, timestamp: 0))
            await socket.push(ServerEnvelope(event: .ack(Ack(id: try #require(frames[0].id), itemId: "item-1")), epoch: 0, seq: 2, timestamp: 0))
            #expect(await first.value == "item-1")
            try await eventually("the item in the store") { await store.current.queue.contains { !$0.pending } }
            let shown = await store.current.queue
            #expect(shown.map(\.pending) == [false, true], "the second add's stand-in took the first add's item: \(shown)")
            second.cancel()
        }
    }
}
