import NIOCore
import NIOPosix
import Synchronization

/// A server on 127.0.0.1 that answers every request head with `answer` (a bare `404` unless
/// told) and keeps the connection open, as a proxy in front of a server that is down might; it
/// records whether the client closed its end.
final class RefusingServer: Sendable {
    /// The port clients connect to.
    let port: Int
    private let listener: any Channel
    private let closedByClient: ClosedCount

    /// Connections their client closed, counted on the connections' loops.
    private final class ClosedCount: Sendable {
        let value = Mutex(0)
    }

    private init(listener: any Channel, closedByClient: ClosedCount) {
        self.listener = listener
        self.port = listener.localAddress?.port ?? 0
        self.closedByClient = closedByClient
    }

    /// How many connections their client has closed so far.
    var connectionsClosedByClient: Int { closedByClient.value.withLock { $0 } }

    /// Runs `body` with a listening server, and stops it however `body` ends.
    static func with<T: Sendable>(
        answer: String = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", _ body: (RefusingServer) async throws -> T
    ) async throws -> T {
        let closed = ClosedCount()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Refuser(answer: answer, closed: { closed.value.withLock { $0 += 1 } }))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = RefusingServer(listener: listener, closedByClient: closed)
        do {
            let value = try await body(server)
            try await listener.close()
            return value
        } catch {
            try? await listener.close()
            throw error
        }
    }

    /// Answers once the request head is in; counts the client's end of the connection.
    private final class Refuser: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var received: [UInt8] = []
        private var answered = false
        private let answer: String
        private let closed: @Sendable () -> Void

        init(answer: String, closed: @escaping @Sendable () -> Void) {
            self.answer = answer
            self.closed = closed
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            received.append(contentsOf: unwrapInboundIn(data).readableBytesView)
            guard !answered, received.count >= 4, received.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) else { return }
            answered = true
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
        }

        /// The client's end: its FIN (the server keeps its own end open), or a reset.
        private var counted = false

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed { count() }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            count()
            context.fireChannelInactive()
        }

        private func count() {
            guard !counted else { return }
            counted = true
            closed()
        }
    }
}
