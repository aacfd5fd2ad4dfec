import Logging
import NIOCore
import NIOEmbedded

@testable import JamServer

/// A realtime socket's handler (OpenJam's profile) on a test channel whose loop's clock a
/// test advances: connected, its first-frame delay past and what it wrote first read.
func openRealtimeTestChannel() async throws -> NIOAsyncTestingChannel {
    let channel = NIOAsyncTestingChannel()
    let loop = channel.testingEventLoop
    var timing = RealtimeHandler.Timing()
    timing.firstFrameDelay = .zero
    try await loop.submit {
        let sink = RawFrameSink()
        let handler = RealtimeHandler(profile: OpenJamProfile(), sink: sink, clock: SystemClock(), timing: timing, logger: Logger(label: "test"))
        try channel.pipeline.syncOperations.addHandlers([sink, handler])
    }.get()
    try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
    await loop.advanceTime(by: .milliseconds(1))
    while try await channel.readOutbound(as: ByteBuffer.self) != nil {}
    return channel
}

/// Control frames the handler wrote since the last look, of the one kind whose first byte
/// (FIN + opcode) is `firstByte`: 0x89 a ping, 0x8A a pong.
func writtenFrames(_ channel: NIOAsyncTestingChannel, firstByte: UInt8) async throws -> Int {
    var count = 0
    while let bytes = try await channel.readOutbound(as: ByteBuffer.self) {
        if bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == firstByte { count += 1 }
    }
    return count
}
