import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// `SessionStore` when a command's answer reaches it before its copy of the mirror shows what
/// the command did: the client hands the two over separately, and either may run first on the
/// store's actor. Here the store's copy is held back on purpose (its run stopped), so the
/// answer always comes first, and what the member did must not flash away and back.
@Suite(.timeLimit(.minutes(1))) struct LaggingStoreTests {
    /// Runs `body` with a second store over the scripted client, whose run is stopped once it
    /// has the state; `body` starts it again with the function it is passed.
    static func withLaggingStore(
        _ body: (ScriptedSocket, SessionClient, SessionStore, @escaping () -> Task<Void, Never>) async throws -> Void
    ) async throws {
        try await withScriptedStore { socket, client, _ in
            let lagging = SessionStore(client: client)
            let following = Task { await lagging.run() }
            try await eventually("the lagging store has the state") { await lagging.current.session != nil }
            following.cancel()
            await following.value
            try await body(socket, client, lagging) { Task { await lagging.run() } }
        }
    }

    @Test("an answered add keeps its stand-in until the store's copy of the mirror shows its item")
    func anAnsweredAddKeepsItsStandInUntilItsItemShows() async throws {
        try await Self.withLaggingStore { socket, client, store, catchUp in
            let track = Fixture.track("song-1")
            let adding = Task { await store.add(track) }
            let frame = try await eventually("the add on the socket") {
                try await socket.frames().first { $0.command.type == .addToQueue }
            }
            let item = QueueItem(id: "item-1", track: track, addedBy: Fixture.host, addedAt: 1, score: 0, reason: "no votes")
            await socket.push(ServerEnvelope(event: .queueItemAdded(QueueItemAdded(item: item, index: 0)), epoch: 0, seq: 2, timestamp: 0))
            await socket.push(ServerEnvelope(event: .ack(Ack(id: try #require(frame.id), itemId: "item-1")), epoch: 0, seq: 2, timestamp: 0))
            #expect(await adding.value == "item-1")
            #expect(await client.mirror.view?.queue.map(\.id) == ["item-1"])
            #expect(await store.current.queue.map(\.pending) == [true], "the add vanished until its item showed")

            let following = catchUp()
            defer { following.cancel() }
            try await eventually("the item in the store") { await store.current.queue.contains { !$0.pending } }
            #expect(await store.current.queue.map(\.item.id) == ["item-1"], "shown once, as the item")
        }
    }

    @Test("the same song added again while the first add's answer waits for the store's copy shows twice")
    func theSameSongAddedAgainInTheLagShowsTwice() async throws {
        try await Self.withLaggingStore { socket, _, store, catchUp in
            let track = Fixture.track("song-1")
            let first = Task { await store.add(track) }
            let frame = try await eventually("the first add on the socket") { try await socket.frames().first { $0.command.type == .addToQueue } }
            let item = QueueItem(id: "item-1", track: track, addedBy: Fixture.host, addedAt: 1, score: 0, reason: "no votes")
            await socket.push(ServerEnvelope(event: .queueItemAdded(QueueItemAdded(item: item, index: 0)), epoch: 0, seq: 2, timestamp: 0))
            await socket.push(ServerEnvelope(event: .ack(Ack(id: try #require(frame.id), itemId: "item-1")), epoch: 0, seq: 2, timestamp: 0))
            #expect(await first.value == "item-1")
            // Added again before this store's copy shows the first item; still on its way.
            let second = Task { await store.add(track) }
            defer { second.cancel() }
            try await eventually("the second add on the socket") { try await socket.frames().count { $0.command.type == .addToQueue } == 2 }
            let following = catchUp()
            defer { following.cancel() }
            try await eventually("the first item in the store") { await store.current.queue.contains { !$0.pending } }
            let shown = await store.current.queue
            #expect(shown.map(\.pending) == [false, true], "the second add took the first add's item: \(shown)")
        }
    }

    @Test("an answered host skip keeps the song hidden, and a second tap does nothing, until the store's copy shows the skip")
    func anAnsweredSkipKeepsTheSongHiddenUntilItShows() async throws {
        try await Self.withLaggingStore { socket, client, store, catchUp in
            // Song a plays; the store hears of it, then falls behind again.
            let playing = NowPlaying(item: Fixture.item("a"), epoch: 1, state: .playing, positionMs: 0, anchorMs: 0)
            await socket.push(ServerEnvelope(event: .stateSync(Fixture.view(nowPlaying: playing)), epoch: 1, seq: 2, timestamp: 0))
            var following = catchUp()
            try await eventually("song a in the store") { await store.current.nowPlaying != nil }
            following.cancel()
            await following.value

            let skipping = Task { await store.skip() }
            let frame = try await eventually("the skip on the socket") {
                try await socket.frames().first { $0.command.type == .skip }
            }
            let previous = HistoryEntry(item: Fixture.item("a"), startedAt: 0, endedAt: 1, outcome: .skipped)
            await socket.push(ServerEnvelope(event: .stopped(PlaybackStopped(epoch: 2, previous: previous)), epoch: 2, seq: 3, timestamp: 0))
            await socket.push(ServerEnvelope(event: .ack(Ack(id: try #require(frame.id))), epoch: 2, seq: 3, timestamp: 0))
            await skipping.value
            #expect(await client.mirror.view?.nowPlaying == nil)
            let answered = await store.current
            #expect(answered.nowPlaying == nil, "the skipped song came back until the skip showed")
            #expect(answered.skipping)

            // A second tap now would name song a's epoch, which the server has moved past.
            await store.skip()
            #expect(try await socket.frames().count { $0.command.type == .skip } == 1, "the second tap sent a skip")

            following = catchUp()
            defer { following.cancel() }
            try await eventually("the skip shown") { await !store.current.skipping }
            let shown = await store.current
            #expect(shown.nowPlaying == nil)
            #expect(shown.history.last?.item.id == Fixture.item("a").id)
            #expect(shown.lastRejection == nil)
        }
    }
}
