import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A plain TCP connection to the server, for what a misbehaving client does below HTTP and
/// for reading exactly what the server answers (an upgrade's headers, say).
public final class RawConnection: Sendable {
    private let channel: any Channel
    private let closed: EventLoopFuture<Void>
    private let inbox: Inbox

    /// Everything the server sent so far.
    private final class Inbox: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let bytes = NIOLockedValueBox<[UInt8]>([])

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            bytes.withLockedValue { $0.append(contentsOf: buffer.readableBytesView) }
        }
    }

    public init(port: Int) async throws {
        let inbox = Inbox()
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(inbox) } }
            .connect(host: "127.0.0.1", port: port).get()
        closed = channel.closeFuture
        self.inbox = inbox
    }

    /// Sends `text` as it is.
    public func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// Sends `bytes` as they are.
    public func send(bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    /// The bytes received once `enough` says they are enough, or all of them after `timeout`.
    public func received(within timeout: Duration = .seconds(5), until enough: ([UInt8]) -> Bool) async -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let bytes = inbox.bytes.withLockedValue { $0 }
            if enough(bytes) { return bytes }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return inbox.bytes.withLockedValue { $0 }
    }

    /// Sends `request` on a connection of its own and returns the answer, whose body is JSON.
    public static func answer(to request: String, port: Int) async throws -> String {
        let connection = try await RawConnection(port: port)
        try await connection.send(request)
        let text = await connection.jsonAnswer()
        await connection.close()
        return text
    }

    /// The text received once it ends an HTTP answer whose body is JSON (its last byte `}`),
    /// or all of it after `timeout`.
    public func jsonAnswer(within timeout: Duration = .seconds(5)) async -> String {
        String(decoding: await received(within: timeout) { $0.last == UInt8(ascii: "}") }, as: UTF8.self)
    }

    /// True when the server closed the connection within `timeout`.
    public func closedByServer(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !channel.isActive { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !channel.isActive
    }

    /// Closes from this side.
    public func close() async {
        guard channel.isActive else { return }
        try? await channel.close()
    }
}
