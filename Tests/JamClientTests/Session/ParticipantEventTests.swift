import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// How a participant hands the socket's events to its sync engine. The waits are long: they
/// wait for progress, not for a time (the held load makes the order certain), and with every
/// suite running at once on two cores the tasks here may not run for many seconds.
@Suite struct ParticipantEventTests {
    @Test("a slow load holds up no later event: a replay of three songs loads only the one playing by its end")
    func aSlowLoadHoldsUpNoLaterEvent() async throws {
        let socket = ScriptedSocket()
        let clock = SystemMonotonicClock()
        let loading = HeldSleeper()
        defer { loading.release() }
        let player = SimulatedPlayer(clock: clock, sleeper: loading, configuration: .init(loadDelayMs: 600))
        let participant = Participant(
            api: JamAPI(server: try #require(URL(string: "http://127.0.0.1:9"))), sessionId: "session", me: "host",
            transport: ScriptedTransport(socket: socket), player: player, clock: clock)
        let engine = try #require(participant.engine)
        let running = Task { try await participant.run() }
        defer { running.cancel() }
        let loads = {
            await player.calls.compactMap { call -> String? in
                if case .load(let trackId, _) = call { return trackId }
                return nil
            }
        }
        // Back after a while: the state as it was, then the songs that started meanwhile.
        let first = NowPlaying(item: Fixture.item("a"), epoch: 1, state: .playing, positionMs: 0, anchorMs: 0)
        await socket.push(Fixture.envelope(.stateSync(Fixture.view(nowPlaying: first)), epoch: 1, seq: 5))
        try await eventually("song a loading", timeout: .seconds(120)) { await loads() == ["a"] }
        await socket.push(Fixture.envelope(.playPrepare(PlayPrepare(item: Fixture.item("b"), epoch: 2, startAt: 1_000, previous: nil)), epoch: 2, seq: 6))
        await socket.push(Fixture.envelope(.playPrepare(PlayPrepare(item: Fixture.item("c"), epoch: 3, startAt: 2_000, previous: nil)), epoch: 3, seq: 7))
        // Song a's load has not ended, and the engine follows the replay already.
        try await eventually("the engine at song c", timeout: .seconds(120)) { await engine.status.itemId == ItemID("item-c") }
        loading.release()
        try await eventually("song c loaded", timeout: .seconds(120)) { await player.loadedTrackId == "c" }
        #expect(await loads() == ["a", "c"], "song c had taken song b's place before song a had loaded")
    }

    @Test("a skip while the current song still loads cancels that load and loads the new song at once")
    func aSkipCancelsTheLoadOfTheSongItReplaces() async throws {
        let socket = ScriptedSocket()
        let clock = SystemMonotonicClock()
        let player = SimulatedPlayer(clock: clock, sleeper: FirstSleepUntilCancelled(), configuration: .init(loadDelayMs: 600))
        let participant = Participant(
            api: JamAPI(server: try #require(URL(string: "http://127.0.0.1:9"))), sessionId: "session", me: "host",
            transport: ScriptedTransport(socket: socket), player: player, clock: clock)
        let running = Task { try await participant.run() }
        defer { running.cancel() }
        let first = NowPlaying(item: Fixture.item("a"), epoch: 1, state: .playing, positionMs: 0, anchorMs: 0)
        await socket.push(Fixture.envelope(.stateSync(Fixture.view(nowPlaying: first)), epoch: 1, seq: 5))
        try await eventually("song a loading", timeout: .seconds(120)) {
            await player.calls.contains { if case .load("a", _) = $0 { true } else { false } }
        }
        // The host skips: song a's load would last for an hour.
        await socket.push(Fixture.envelope(.playPrepare(PlayPrepare(item: Fixture.item("b"), epoch: 2, startAt: 1_000, previous: nil)), epoch: 2, seq: 6))
        try await eventually("song b loaded", timeout: .seconds(60)) { await player.loadedTrackId == "b" }
        let loaded = await player.calls.compactMap { call -> String? in
            if case .loaded(let trackId, _) = call { return trackId }
            return nil
        }
        #expect(loaded == ["b"], "song a's load was not given up")
        // Ready goes out after the load, for song b only.
        try await eventually("ready for song b", timeout: .seconds(60), until: { try await Self.readies(on: socket) == [2] })
    }

    @Test("a device that said ready says it again on its next socket: the server forgets a member's ready when its socket goes")
    func readyIsSaidAgainOnTheNextSocket() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        let clock = SystemMonotonicClock()
        let player = SimulatedPlayer(clock: clock, sleeper: TaskSleeper())
        let participant = Participant(
            api: JamAPI(server: try #require(URL(string: "http://127.0.0.1:9"))), sessionId: "session", me: "host",
            transport: SocketsInTurn([first, second], closes: [RealtimeClose(code: nil, reason: nil)]), player: player, clock: clock,
            backoff: Backoff(baseMs: 10, capMs: 10))
        let running = Task { try await participant.run() }
        defer { running.cancel() }
        let preparing = NowPlaying(item: Fixture.item("a"), epoch: 2, state: .preparing, positionMs: 0, anchorMs: 60_000)
        await first.push(Fixture.envelope(.stateSync(Fixture.view(nowPlaying: preparing)), epoch: 2, seq: 5))
        // (The run's first connection may say it twice: once loaded, and once connected.)
        try await eventually("ready on the first socket", timeout: .seconds(60), until: { try await Self.readies(on: first).contains(2) })
        await first.close()
        // Back with nothing missed: the server answers the new socket's ping, and sends no event.
        try await eventually("connected on the second socket", timeout: .seconds(60), until: {
            try await second.answerPings()
            let phase = await participant.client.phase
            let sent = try await second.commands()
            return phase == .connected && !sent.isEmpty
        })
        try await eventually("ready on the second socket", timeout: .seconds(60), until: { try await Self.readies(on: second).contains(2) })
    }
}

extension ParticipantEventTests {
    /// The epochs of the `ready` frames sent on `socket`, in order.
    static func readies(on socket: ScriptedSocket) async throws -> [Int64] {
        try await socket.commands().compactMap { command -> Int64? in
            if case .ready(let ready) = command { return ready.epoch }
            return nil
        }
    }
}

/// A sleeper whose first sleep lasts until its task is cancelled (an hour at most); every
/// later one returns at once: a player's first load on it never ends by itself.
final class FirstSleepUntilCancelled: Sleeper {
    private let first = Mutex(true)

    func sleep(ms: Double) async throws {
        let isFirst = first.withLock { first in
            defer { first = false }
            return first
        }
        if isFirst { try await Task.sleep(for: .seconds(3_600)) }
    }
}

/// A sleeper whose sleeps last until the test ends them (and every later one returns at
/// once): a player's load on it takes as long as the test wants, however busy the machine.
final class HeldSleeper: Sleeper {
    private let state = Mutex<(released: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func sleep(ms: Double) async throws {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if now { continuation.resume() }
        }
    }

    /// Ends every sleep, now and from now on.
    func release() {
        let waiting = state.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
