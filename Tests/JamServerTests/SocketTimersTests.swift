import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import JamServer

/// A realtime socket's pings and idle checks reschedule themselves: a socket open for days
/// must hold as many timers as one open for a minute.
@Suite struct SocketTimersTests {
    @Test func aSocketOpenForThousandsOfPingIntervalsHoldsFourTimersAtMost() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        let sink = RawFrameSink()
        let timing = RealtimeHandler.Timing()
        let handler = RealtimeHandler(
            profile: OpenJamProfile(), sink: sink, clock: SystemClock(), timing: timing, logger: Logger(label: "test"))
        try channel.pipeline.syncOperations.addHandler(sink)
        try channel.pipeline.syncOperations.addHandler(handler)
        let held = handler.timers.count
        // A day of ping intervals on the loop's own clock.
        for _ in 0..<2_880 { loop.advanceTime(by: .seconds(30)) }
        #expect(handler.timers.count <= held, "held \(held) timers at first, \(handler.timers.count) after a day")
        #expect(handler.timers.ping != nil, "the ping goes on")
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func aTimerScheduledAgainInItsSlotCancelsTheOneItReplaces() throws {
        let loop = EmbeddedEventLoop()
        var timers = SocketTimers()
        let first = loop.scheduleTask(in: .seconds(30)) {}
        timers.ping = first
        timers.ping = loop.scheduleTask(in: .seconds(30)) {}
        #expect(throws: EventLoopError.self) { try first.futureResult.wait() }
        #expect(timers.count == 1)
        timers.cancelAll()
        #expect(timers.count == 0)
        try loop.syncShutdownGracefully()
    }
}
