import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import JamServer

/// Nothing reaches a new socket in its first 100 ms, a refusal's close included: some clients
/// lose what comes in the same read as the upgrade's answer, and a refusal lost so reads as a
/// drop to retry.
@Suite struct FirstFrameDelayTests {
    /// A socket's handler with the usual timing (the 100 ms hold), on a channel just connected.
    static func newSocket() async throws -> (NIOAsyncTestingChannel, NIOLoopBound<RealtimeHandler>) {
        let channel = NIOAsyncTestingChannel()
        let loop = channel.testingEventLoop
        let handler = try await loop.submit {
            let sink = RawFrameSink()
            let handler = RealtimeHandler(
                profile: OpenJamProfile(), sink: sink, clock: SystemClock(), timing: RealtimeHandler.Timing(), logger: Logger(label: "test"))
            try channel.pipeline.syncOperations.addHandlers([sink, handler])
            return NIOLoopBound(handler, eventLoop: loop)
        }.get()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        return (channel, handler)
    }

    @Test func aRefusalInTheFirst100msIsSentWithItsCloseOnceTheSocketIsOldEnough() async throws {
        let (channel, handler) = try await Self.newSocket()
        let loop = channel.testingEventLoop
        await loop.advanceTime(by: .milliseconds(10))

        let refusal = WebSocketText.frame(ByteBuffer(string: #"{"type":"error"}"#))
        try await loop.submit { handler.value.refuse(frame: refusal, code: 4401, reason: "sign in first") }.get()
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil, "nothing before the socket is 100 ms old")
        await loop.advanceTime(by: .milliseconds(89))
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil)

        await loop.advanceTime(by: .milliseconds(1))
        let error = try #require(try await channel.readOutbound(as: ByteBuffer.self), "the refusal")
        #expect(error.getInteger(at: error.readerIndex, as: UInt8.self) == 0x81)
        #expect(String(buffer: WebSocketText.payload(of: error)) == #"{"type":"error"}"#)
        let close = try #require(try await channel.readOutbound(as: ByteBuffer.self), "its close, after it")
        #expect(close.getInteger(at: close.readerIndex, as: UInt8.self) == 0x88)
        #expect(close.getInteger(at: close.readerIndex + 2, as: UInt16.self) == 4401)
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    @Test func aPeerThatClosesWhileARefusalIsHeldGetsTheRefusalAndItsCloseAtOnce() async throws {
        let (channel, handler) = try await Self.newSocket()
        let loop = channel.testingEventLoop
        let refusal = WebSocketText.frame(ByteBuffer(string: #"{"type":"error"}"#))
        try await loop.submit { handler.value.refuse(frame: refusal, code: 4404, reason: "no such session") }.get()
        await loop.advanceTime(by: .milliseconds(50))
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil)

        // The peer's close (1000).
        try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer(bytes: [0x03, 0xE8])))
        let error = try #require(try await channel.readOutbound(as: ByteBuffer.self), "the refusal, not lost")
        #expect(error.getInteger(at: error.readerIndex, as: UInt8.self) == 0x81)
        let close = try #require(try await channel.readOutbound(as: ByteBuffer.self), "its close")
        #expect(close.getInteger(at: close.readerIndex + 2, as: UInt16.self) == 4404)
        try await channel.closeFuture.get()
    }
}
