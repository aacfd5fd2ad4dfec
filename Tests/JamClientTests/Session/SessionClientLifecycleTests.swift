import Foundation
@testable import JamClient
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// How a `SessionClient`'s connection starts, resumes and ends, against a scripted socket: no
/// command is left waiting, the phase says what is going on, and subscribers see each event once.
/// (A regression here tends to leave a command waiting for ever: the time limit turns that into a failure.)
@Suite(.timeLimit(.minutes(1))) struct SessionClientLifecycleTests {
    static func client(_ transport: some RealtimeTransport) throws -> SessionClient {
        let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")))
        return SessionClient(api: api, sessionId: "session", me: "host", transport: transport, seed: 1)
    }

    static func envelope(_ event: ServerEvent, seq: Int64) -> ServerEnvelope {
        ServerEnvelope(event: event, epoch: 0, seq: seq, timestamp: 0)
    }

    /// Runs `body` with a client whose run holds `socket`, connected on an empty session at
    /// seq 5; the run is cancelled after `body`.
    static func connected(_ body: (ScriptedSocket, SessionClient, Task<Void, any Error>) async throws -> Void) async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        try await body(socket, client, running)
    }

    static func member(_ name: String) -> Member {
        Member(userId: UserID(name.lowercased()), displayName: name, role: .member, connected: true)
    }

    @Test("a socket the server answers is connected, even when the resume has nothing to replay")
    func aSocketTheServerAnswersIsConnectedEvenWithNothingToReplay() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let clockSamples = Atomic<Int>(0)
        await client.onPong { _, _ in clockSamples.add(1, ordering: .relaxed) }
        let running = Task { try await client.run() }
        defer { running.cancel() }
        try await eventually("the socket's first ping") {
            try await socket.commands().contains { if case .ping = $0 { true } else { false } }
        }
        #expect(await client.phase == .connecting(attempt: 1))
        try await socket.answerPings()
        try await eventually("connected") { await client.phase == .connected }
        #expect(clockSamples.load(ordering: .relaxed) == 0, "the socket's own ping is not a clock sample")
    }

    @Test("cancelling run fails the commands still waiting for an answer and goes back to idle")
    func cancellingRunFailsTheCommandsStillWaitingAndGoesBackToIdle() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let sending = Task { try await client.send(.skip(Skip())) }
        try await eventually("the skip on the socket") {
            try await socket.commands().contains { if case .skip = $0 { true } else { false } }
        }
        running.cancel()
        let outcome = await sending.result
        #expect(throws: JamError(.unavailable, "the connection stopped before the server answered")) { try outcome.get() }
        try await eventually("idle") { await client.phase == .idle }
    }

    @Test("cancelling run ends it also when the socket's receive ignores cancellation, as URLSession's does")
    func cancellingRunEndsItWhenTheSocketsReceiveIgnoresCancellation() async throws {
        let socket = ScriptedSocket(ignoresCancellation: true)
        let client = try Self.client(ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        running.cancel()
        // Without the close, this waits for ever (the suite's time limit fails it).
        _ = await running.result
        #expect(await socket.isClosed, "the socket is closed, so the server no longer counts the member")
        #expect(await client.phase == .idle)
    }

    @Test("a command the server would refuse is refused before it is sent, and the socket stays")
    func aCommandTheServerWouldRefuseIsRefusedBeforeItIsSent() async throws {
        try await Self.connected { socket, client, _ in
            // An embedded cover makes the frame larger than a server takes: it would close the
            // socket with 1009, and the command, sent again after each reconnect, every socket after.
            var covered = Track(id: "t", name: "Song", artist: "Artist")
            covered.artworkURL = "data:image/jpeg;base64," + String(repeating: "A", count: ClientFrame.maxBytes)
            await #expect(throws: JamError(.invalidField, "track.artworkURL must be at most 2048 characters, got \(covered.artworkURL?.count ?? 0)")) {
                try await client.send(.addToQueue(AddToQueue(track: covered, nonce: "n1")))
            }
            await #expect(throws: JamError(.invalidField, "positionMs must not be negative, got -1")) {
                try await client.send(.seek(Seek(positionMs: -1)))
            }
            let sent = try await socket.commands()
            #expect(!sent.contains { if case .addToQueue = $0 { true } else { false } }, "nothing of the add reached the socket")
            #expect(await client.phase == .connected)
        }
    }

    @Test("a reason for good fails every waiting command with it and ends every subscription")
    func aReasonForGoodFailsEveryWaitingCommandAndEndsEverySubscription() async throws {
        let refusal = JamError(.unauthorized, "the token has expired")
        let client = try Self.client(RefusingTransport(reason: refusal))
        let ended = Atomic<Bool>(false)
        let updates = await client.subscribe()
        let listening = Task {
            for await _ in updates {}
            ended.store(true, ordering: .relaxed)
        }
        let sending = Task { try await client.send(.skip(Skip())) }
        await #expect(throws: refusal) { try await client.run() }
        #expect(await client.phase == .failed(refusal))
        let outcome = await sending.result
        #expect(throws: refusal) { try outcome.get() }
        try await eventually("the subscription ended") { ended.load(ordering: .relaxed) }
        await listening.value
        // One made afterwards ends at once, after saying why.
        var late: [ClientUpdate] = []
        for await update in await client.subscribe() { late.append(update) }
        #expect(late.count == 1)
        if case .phase(.failed(let reason))? = late.first { #expect(reason == refusal) } else { Issue.record("\(late)") }
    }

    @Test("an event this build cannot decode brings the whole state instead of freezing the mirror")
    func anEventThisBuildCannotDecodeBringsTheWholeState() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        // A known type whose data this build cannot read (a newer server's track source, say).
        await socket.push(#"{"type":"queueItemAdded","data":{"item":{"id":3}},"epoch":0,"seq":6,"timestamp":0}"#)
        try await eventually("a request for the whole state") { try await socket.hellos() == [nil] }

        var view = Fixture.view(nowPlaying: nil)
        view.members.append(Self.member("Fay"))
        await socket.push(Self.envelope(.stateSync(view), seq: 6))
        await socket.push(Self.envelope(.memberJoined(Self.member("Gil")), seq: 7))
        try await eventually("the mirror after the state") { await client.mirror.seq == 7 }
        #expect(await client.mirror.view?.members.map(\.userId) == ["host", "fay", "gil"])
    }

    /// The id of the first `skip` the client sent.
    static func skipId(_ socket: ScriptedSocket) async throws -> String? {
        try await socket.frames().first { if case .skip = $0.command { true } else { false } }?.id
    }

    @Test("an answer this build cannot read still answers its command, which is not left waiting")
    func anAnswerThisBuildCannotReadStillAnswersItsCommand() async throws {
        try await Self.connected { socket, client, _ in
            let sending = Task { try await client.send(.skip(Skip())) }
            try await eventually("the skip on the socket") { try await Self.skipId(socket) != nil }
            let id = try #require(try await Self.skipId(socket))
            // A newer server's error code: the envelope does not decode.
            await socket.push(#"{"type":"error","data":{"id":"\#(id)","code":"somethingNew","message":"no"},"epoch":0,"seq":5,"timestamp":0}"#)
            let outcome = await sending.result
            #expect(throws: JamError(.internal, "no")) { try outcome.get() }
            // An ack this build cannot read (a newer server's item id): the command was applied.
            let pausing = Task { try await client.send(.pause(Pause())) }
            try await eventually("the pause on the socket") {
                try await socket.frames().contains { if case .pause = $0.command { true } else { false } }
            }
            let pauseId = try #require(try await socket.frames().first { if case .pause = $0.command { true } else { false } }?.id)
            await socket.push(#"{"type":"ack","data":{"id":"\#(pauseId)","itemId":7},"epoch":0,"seq":5,"timestamp":0}"#)
            #expect(try await pausing.value == Ack(id: pauseId))
            #expect(try await socket.hellos().isEmpty, "an answer carries the current seq: nothing is missing")
        }
    }

    @Test("a send whose caller gives up stops waiting and is not sent later")
    func aSendWhoseCallerGivesUpStopsWaitingAndIsNotSentLater() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        // Not connected: the skip waits for a connection that is not coming yet.
        let sending = Task { try await client.send(.skip(Skip())) }
        try await Task.sleep(for: .milliseconds(50))
        sending.cancel()
        let outcome = await sending.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        let running = Task { try await client.run() }
        defer { running.cancel() }
        try await eventually("the socket's first ping") {
            try await socket.commands().contains { if case .ping = $0 { true } else { false } }
        }
        #expect(try await Self.skipId(socket) == nil)
    }

    @Test("a second host skip tapped before the first is answered sends nothing")
    func aSecondSkipBeforeTheFirstIsAnsweredSendsNothing() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let store = SessionStore(client: client)
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let first = Task { await store.skip() }
        try await eventually("the skip on the socket") { try await Self.skipId(socket) != nil }
        await store.skip()
        let id = try #require(try await Self.skipId(socket))
        await socket.push(Self.envelope(.ack(Ack(id: id)), seq: 5))
        await first.value
        let skips = try await socket.commands().filter { if case .skip = $0 { true } else { false } }
        #expect(skips.count == 1)
    }

    enum SkipPress: CaseIterable { case hostSkip, request, withdrawal }

    @Test("a host's skip, a member's skip request and its withdrawal name the song they are for, so a late one cannot act on the next",
          arguments: SkipPress.allCases)
    func skipsNameTheEpochOfTheSongTheyAreFor(press: SkipPress) async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let store = SessionStore(client: client)
        let following = Task { await store.run() }
        defer { following.cancel() }
        let running = Task { try await client.run() }
        defer { running.cancel() }
        let playing = NowPlaying(item: Fixture.item("a", durationMs: 240_000), epoch: 7, state: .playing, positionMs: 0, anchorMs: 1_000)
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: playing)), seq: 5))
        try await eventually("the song shows") { await store.current.nowPlaying?.epoch == 7 }
        let pressing = Task {
            switch press {
            case .hostSkip: await store.skip()
            case .request: await store.requestSkip()
            case .withdrawal: await store.withdrawSkipRequest()
            }
        }
        let sent = { () async throws -> ClientFrame? in
            try await socket.frames().first { frame in
                switch frame.command {
                case .skip, .requestSkip, .withdrawSkipRequest: true
                default: false
                }
            }
        }
        try await eventually("the command on the socket") { try await sent() != nil }
        let frame = try #require(try await sent())
        let expected: ClientCommand = switch press {
        case .hostSkip: .skip(Skip(epoch: 7))
        case .request: .requestSkip(Skip(epoch: 7))
        case .withdrawal: .withdrawSkipRequest(Skip(epoch: 7))
        }
        #expect(frame.command == expected)
        await socket.push(Self.envelope(.ack(Ack(id: try #require(frame.id))), seq: 5))
        await pressing.value
    }

    @Test("a run started while the one before still closes its socket waits for it, and keeps its own socket")
    func aRunStartedWhileTheOneBeforeStillClosesWaitsForIt() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        let closing = HeldSleeper()
        defer { closing.release() }
        let client = try Self.client(SocketsInTurn([first, second], firstClose: closing))
        let earlier = Task { try await client.run() }
        try await eventually("the first socket") { try await !first.commands().isEmpty }
        // A view's task restarts: the old run is cancelled and a new one starts at once, while
        // the old socket still closes.
        earlier.cancel()
        let later = Task { try await client.run() }
        defer { later.cancel() }
        try await eventually("the later run waiting") { client.waitingRuns.withLock { !$0.isEmpty } }
        closing.release()
        _ = await earlier.result
        await second.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected on the second socket") { await client.phase == .connected }
        let voting = Task { try await client.send(.vote(Vote(itemId: "a", value: 1))) }
        let vote = { () async throws -> ClientFrame? in
            try await second.frames().first { if case .vote = $0.command { true } else { false } }
        }
        try await eventually("the vote on the second socket", timeout: .seconds(2)) { try await vote() != nil }
        await second.push(Self.envelope(.ack(Ack(id: try #require(try await vote()?.id))), seq: 5))
        _ = try await voting.value
        #expect(await client.phase == .connected)
    }

    @Test("a run waiting for the one before gives up when cancelled, and leaves the connection alone")
    func aWaitingRunGivesUpWhenCancelled() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let holding = Task { try await client.run() }
        defer { holding.cancel() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let waiting = Task { try await client.run() }
        try await eventually("the second run waiting") { client.waitingRuns.withLock { !$0.isEmpty } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(client.waitingRuns.withLock { $0.isEmpty })
        #expect(await client.phase == .connected, "the connection the first run holds is untouched")
    }

    @Test("a leave whose answer was lost with its socket succeeds when the next connection is refused as not a member")
    func aLeaveWhoseAnswerWasLostSucceeds() async throws {
        let first = ScriptedSocket(), second = ScriptedSocket()
        await second.push(Self.envelope(.error(ErrorEvent(id: nil, code: .notMember, message: "not a member of this session")), seq: 0))
        await second.close()
        let refused = RealtimeClose(code: CloseCode(refusing: .notMember).rawValue, reason: "not a member of this session")
        let client = try Self.client(SocketsInTurn([first, second], closes: [RealtimeClose(code: nil, reason: nil), refused]))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await first.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("connected") { await client.phase == .connected }
        let leaving = Task { try await client.send(.leave) }
        try await eventually("the leave sent") { try await first.commands().contains(.leave) }
        // The server applies it, and the socket drops before its answer comes.
        await first.close()
        let ack = try await leaving.value
        #expect(ack.id == (try await first.frames().first { $0.command == .leave }?.id))
        try await running.value
        #expect(await client.phase == .idle)
    }

    @Test("a command after this member's answered leave fails at once, not waiting for a connection that will not come")
    func aCommandAfterAnAnsweredLeaveFails() async throws {
        try await Self.connected { socket, client, running in
            let leaving = Task { try await client.send(.leave) }
            try await eventually("the leave sent") { try await socket.commands().contains(.leave) }
            let id = try #require(try await socket.frames().first { $0.command == .leave }?.id)
            await socket.push(Self.envelope(.ack(Ack(id: id)), seq: 0))
            _ = try await leaving.value
            // The server closes the member's socket; the run ends.
            await socket.close()
            try await running.value
            let late = Task { try await client.send(.skip(Skip())) }
            let giveUp = Task {
                try await Task.sleep(for: .seconds(5))
                late.cancel()
            }
            defer { giveUp.cancel() }
            let result = await late.result
            if case .failure(let error) = result, error is CancellationError { Issue.record("the command after the leave was still waiting after 5 s") }
            if case .failure(let error as JamError) = result { #expect(error.code == .notMember) } else { Issue.record("not refused: \(result)") }
            #expect(try await socket.commands().contains(.skip(Skip())) == false)
        }
    }

    @Test("a store's snapshot streams outlive a cancelled run, and a later run feeds them")
    func snapshotStreamsOutliveACancelledRun() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        let store = SessionStore(client: client)
        let names = Mutex<[String]>([])
        let snapshots = await store.snapshots()
        let watching = Task {
            for await snapshot in snapshots { names.withLock { $0 = snapshot.members.map(\.displayName) } }
        }
        defer { watching.cancel() }
        let first = Task { await store.run() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        try await eventually("the session shows") { await store.current.session != nil }
        // The app goes to the background: the store's run is cancelled, and started again.
        first.cancel()
        await first.value
        let second = Task { await store.run() }
        defer { second.cancel() }
        // Before or after the second run subscribes, it brings the store the mirror with Gil.
        await socket.push(Self.envelope(.memberJoined(Self.member("Gil")), seq: 6))
        try await eventually("the stream shows Gil", timeout: .seconds(3)) { names.withLock { $0.contains("Gil") } }
    }

    @Test("a resume the server refuses is asked for again at the next gap")
    func aResumeTheServerRefusesIsAskedForAgainAtTheNextGap() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        await socket.push(Self.envelope(.memberJoined(Self.member("Gil")), seq: 7))
        try await eventually("the resume") { try await socket.hellos() == [5] }
        // Too many hellos: refused, without an id since the hello had none.
        await socket.push(Self.envelope(.error(ErrorEvent(id: nil, code: .rateLimited, message: "too many hellos", retryAfterMs: 100)), seq: 7))
        await socket.push(Self.envelope(.memberJoined(Self.member("Fay")), seq: 8))
        try await eventually("the resume asked for again") { try await socket.hellos() == [5, 5] }
    }

    @Test("after a gap, subscribers get each event once and in order")
    func afterAGapSubscribersGetEachEventOnceAndInOrder() async throws {
        let socket = ScriptedSocket()
        let client = try Self.client(ScriptedTransport(socket: socket))
        let seen = Mutex<[Int64]>([])
        let updates = await client.subscribe()
        let listening = Task {
            for await update in updates {
                guard case .envelope(let envelope) = update else { continue }
                seen.withLock { $0.append(envelope.seq) }
            }
        }
        defer { listening.cancel() }
        let running = Task { try await client.run() }
        defer { running.cancel() }
        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 10))
        await socket.push(Self.envelope(.memberJoined(Self.member("Gil")), seq: 12))
        try await eventually("the resume") { try await socket.hellos() == [10] }
        await socket.push(Self.envelope(.memberJoined(Self.member("Fay")), seq: 11))
        await socket.push(Self.envelope(.memberJoined(Self.member("Gil")), seq: 12))
        try await eventually("the mirror at 12") { await client.mirror.seq == 12 }
        try await eventually("the subscriber at 12") { seen.withLock { $0.last } == 12 }
        #expect(seen.withLock { $0 } == [10, 11, 12])
    }

    @Test("the watch and the wait before a reconnect run on the client's own clock and sleeper")
    func theWatchAndTheReconnectWaitRunOnTheClientsClockAndSleeper() async throws {
        // A server that never answers the new socket, and waits that would take the default
        // open limit (10 s) and up to a minute of backoff in real time: in virtual time they
        // pass at once.
        let socket = ScriptedSocket()
        let clock = ManualClock()
        let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")))
        let client = SessionClient(
            api: api, sessionId: "session", me: "host", transport: ScriptedTransport(socket: socket),
            backoff: Backoff(baseMs: 60_000, capMs: 60_000), seed: 1, clock: clock, sleeper: AdvancingSleeper(clock: clock))
        let updates = await client.subscribe()
        let opened = clock.now()
        let started = ContinuousClock.now
        let running = Task { try await client.run() }
        defer { running.cancel() }
        var retry: (afterMs: Double, reason: String, at: Double)?
        var reconnectedAt: Double?
        for await update in updates {
            guard case .phase(let phase) = update else { continue }
            if case .retrying(_, let afterMs, let reason) = phase, retry == nil {
                retry = (afterMs, reason, clock.now())
            } else if case .connecting(attempt: 2) = phase {
                reconnectedAt = clock.now()
                break
            }
        }
        running.cancel()
        let dropped = try #require(retry)
        #expect(dropped.reason.contains("the server did not answer on the new connection"), "\(dropped.reason)")
        #expect(dropped.at - opened > ConnectionWatch().openLimitMs, "dropped after \(dropped.at - opened) ms of the client's time")
        #expect(await socket.isClosed)
        // Real sleeps would take this long before the second attempt.
        try #require(dropped.afterMs > 10_000, "the seed's first backoff is \(dropped.afterMs) ms")
        // Read when the update arrives: never before the client's clock got there.
        #expect(try #require(reconnectedAt) - opened >= ConnectionWatch().openLimitMs + dropped.afterMs)
        // Real sleeps would take at least the open limit and then the backoff (over 20 s): that
        // is the bound. The virtual ones took up to 5.1 s with every suite running on two cores,
        // and 15.9 s with browser tests beside them.
        let real = ContinuousClock.now - started
        #expect(real < .milliseconds(Int(ConnectionWatch().openLimitMs + dropped.afterMs)), "real time passed: \(real)")
    }
}
