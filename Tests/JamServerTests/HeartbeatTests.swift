import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import JamServer

/// A socket whose peer went away without a word is pinged and then closed; a peer that
/// answers, or talks, keeps it. Ticks come one interval apart, as the handler schedules them.
@Suite struct HeartbeatTests {
    static let interval = TimeAmount.seconds(15)
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    /// The actions of ticks at `start + k × interval` for k in `ticks`, with the peer heard at `heard`.
    static func actions(_ heartbeat: Heartbeat, heard: [NIODeadline], ticks: ClosedRange<Int64>) -> [HeartbeatState.Action] {
        var state = HeartbeatState(heartbeat, now: start)
        var pending = heard.sorted()
        return ticks.map { k in
            let now = start + interval * k
            while let first = pending.first, first <= now {
                state.heard(at: first)
                pending.removeFirst()
            }
            return state.tick(at: now)
        }
    }

    @Test func afterSilencePingsOnlyASocketSilentForAWholeIntervalAndClosesItAtTheNextTick() {
        let actions = Self.actions(.afterSilence(Self.interval), heard: [], ticks: 1...3)
        #expect(actions == [.ping, .close, .close])
    }

    @Test func afterSilenceNeverPingsASocketThatKeepsTalking() {
        let talk = (1...40).map { Self.start + .seconds(Int64($0) * 5) }
        #expect(Self.actions(.afterSilence(Self.interval), heard: talk, ticks: 1...12) == Array(repeating: .none, count: 12))
    }

    @Test func everyPingsAtEveryTickEvenASocketThatKeepsTalking() {
        let talk = (1...40).map { Self.start + .seconds(Int64($0) * 5) }
        #expect(Self.actions(.every(Self.interval), heard: talk, ticks: 1...12) == Array(repeating: .ping, count: 12))
    }

    @Test func anyFrameAfterAPingAnswersIt() {
        // A pong, or a message, 1 s after each ping.
        let answers = (1...3).map { Self.start + Self.interval * Int64($0) + .seconds(1) }
        #expect(Self.actions(.every(Self.interval), heard: answers, ticks: 1...4) == [.ping, .ping, .ping, .ping])
        #expect(Self.actions(.afterSilence(Self.interval), heard: [Self.start + Self.interval + .seconds(1)], ticks: 1...3) == [.ping, .none, .ping])
    }

    /// A peer last heard just after a tick: `every` closes it at the second tick after (within
    /// two intervals), `afterSilence` at the third (within three).
    @Test func aPeerThatGoesSilentIsClosedWithinTwoIntervalsWhenEveryTickPingsAndThreeOtherwise() {
        let lastHeard = [Self.start + .milliseconds(1)]
        #expect(Self.actions(.every(Self.interval), heard: lastHeard, ticks: 1...2) == [.ping, .close])
        #expect(Self.actions(.afterSilence(Self.interval), heard: lastHeard, ticks: 1...3) == [.none, .ping, .close])
    }

    /// The handler carries the actions out on its own loop: a silent socket gets a ping
    /// frame after an interval, and is closed an interval later.
    @Test(.timeLimit(.minutes(1))) func theHandlerPingsASilentSocketAndClosesItWhenNothingAnswers() async throws {
        let channel = try await openRealtimeTestChannel()
        let loop = channel.testingEventLoop
        await loop.advanceTime(by: .seconds(29))
        #expect(try await Self.pings(channel) == 0, "no ping before 30 s of silence")
        await loop.advanceTime(by: .seconds(1))
        #expect(try await Self.pings(channel) == 1)
        #expect(channel.isActive)
        await loop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive, "nothing answered the ping: the socket is closed")
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    @Test(.timeLimit(.minutes(1))) func theHandlerKeepsASocketWhosePeerAnswersItsPings() async throws {
        let channel = try await openRealtimeTestChannel()
        let loop = channel.testingEventLoop
        for _ in 0..<10 {
            await loop.advanceTime(by: .seconds(30))
            #expect(try await Self.pings(channel) == 1)
            await loop.advanceTime(by: .seconds(1))
            try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .pong, data: ByteBuffer()))
            await loop.advanceTime(by: .seconds(29))
            #expect(channel.isActive)
        }
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    /// Ping frames written out (FIN + opcode 0x9).
    static func pings(_ channel: NIOAsyncTestingChannel) async throws -> Int {
        try await writtenFrames(channel, firstByte: 0x89)
    }
}
