import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import JamServer

/// A peer that pings while it reads nothing gets no pongs piled up for it.
@Suite struct PingFloodTests {
    @Test(.timeLimit(.minutes(1))) func pingsWhileTheSocketTakesNoMoreBytesGetOnePongOnceItDrains() async throws {
        let channel = try await openRealtimeTestChannel()
        let loop = channel.testingEventLoop

        let ping = WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "p"))
        try await loop.submit { channel.isWritable = false }.get()
        for _ in 0..<100 { try await channel.writeInbound(ping) }
        #expect(try await Self.pongs(channel) == 0, "no pong piles up while the peer reads nothing")

        // Draining again, the latest ping is answered once, with no new ping.
        try await loop.submit {
            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
        }.get()
        #expect(try await Self.pongs(channel) == 1)
        try await channel.writeInbound(ping)
        #expect(try await Self.pongs(channel) == 1)
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    /// Pong frames written out (FIN + opcode 0xA).
    static func pongs(_ channel: NIOAsyncTestingChannel) async throws -> Int {
        try await writtenFrames(channel, firstByte: 0x8A)
    }
}
