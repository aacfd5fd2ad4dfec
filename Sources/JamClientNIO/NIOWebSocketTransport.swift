import Foundation
import JamClient
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
import WSCore

/// The realtime transport on SwiftNIO (the WebSocket of hummingbird's swift-websocket): Linux,
/// macOS, iOS.
public struct NIOWebSocketTransport: RealtimeTransport {
    /// Largest frame accepted from the server (queue updates of big sessions are large).
    public var maxFrameSize: Int
    /// How long a close waits for the server's answering close before the connection is cut.
    /// A socket dropped with `abandon()` does not wait.
    public var closeTimeout: Duration
    /// How long the open may take, from the name's lookup to the server's answer to the
    /// upgrade: an unreachable server, or one that takes the connection and never answers, fails
    /// the open once this has passed.
    public var openTimeout: Duration
    /// TLS settings for `wss://` addresses (the system's roots by default).
    public var tlsConfiguration: TLSConfiguration
    private let logger: Logger

    /// Creates the transport.
    public init(
        maxFrameSize: Int = 1 << 22, closeTimeout: Duration = .seconds(5), openTimeout: Duration = .seconds(10),
        tlsConfiguration: TLSConfiguration = .makeClientConfiguration(), logger: Logger = Logger(label: "openjam.transport")
    ) {
        self.maxFrameSize = maxFrameSize
        self.closeTimeout = closeTimeout
        self.openTimeout = openTimeout
        self.tlsConfiguration = tlsConfiguration
        self.logger = logger
    }

    /// Opens a WebSocket to `url` on NIO, runs `body` with it, and returns how it closed.
    /// Throws `WebSocketOpenError` when the connection cannot be made, the server does not
    /// upgrade it, the open does not finish within `openTimeout`, or the connection fails
    /// before the upgrade (TLS included); `CancellationError` at once when the caller is
    /// cancelled while the socket opens.
    public func withSocket(
        url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void
    ) async throws -> RealtimeClose {
        let target = try WebSocketTarget(url)
        let maxSize = maxFrameSize
        let closeTimeout = closeTimeout
        let sslContext = target.usesTLS ? try NIOSSLContext(configuration: tlsConfiguration) : nil
        let upgrade = TimedUpgradeChannel(
            target: target, headers: headers.map { ($0.key, $0.value) }, maxFrameSize: maxFrameSize, closeTimeout: closeTimeout,
            openTimeout: openTimeout, deadline: .now() + TimeAmount(openTimeout), sslContext: sslContext
        ) { inbound, outbound, context in
            let (messages, continuation) = AsyncThrowingStream.makeStream(of: String.self)
            let socket = NIOSocket(messages: messages, outbound: outbound, channel: context.channel)
            // Whichever child ends first ends the wait for the server's answer: the reader (at
            // the server's close, the connection's end or a read error) or the close timer.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await message in inbound.messages(maxSize: maxSize) {
                            if case .text(let text) = message { continuation.yield(text) }
                        }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
                let ending: (any Error)?
                do {
                    try await body(socket)
                    ending = nil
                } catch {
                    ending = error
                }
                // However the body ended, the client closes as RFC 6455 asks: it sends a close
                // and reads on until the server's close answers it. Cancelling the reader at
                // once would stop the reads that take the answer in (over TLS every close then
                // took the whole `closeTimeout`). Then the connection is cut beneath TLS, with no
                // close_notify: once the close frames are exchanged (RFC 6455 lets the client
                // end the connection then), and when the server does not answer in time or the
                // caller is cancelled. TLS's own close would wait up to 5 s more for a peer slow
                // to end the connection.
                await socket.close()
                group.addTask {
                    try await Task.sleep(for: closeTimeout)
                }
                do {
                    try await group.next()
                } catch {
                    // The caller was cancelled: nothing more to wait for.
                }
                group.cancelAll()
                socket.cut()
                if let ending { throw ending }
            }
        }
        let close = try await upgrade.handle(try await upgrade.connect(), logger: logger)
        return RealtimeClose(code: close.map { UInt16(webSocketErrorCode: $0.closeCode) }, reason: close?.reason)
    }
}

/// One NIO socket: received text arrives through a stream filled by the transport's reader.
/// `receive()` is called by one task at a time (the `RealtimeSocket` contract), which is
/// what makes the stored iterator safe to share.
final class NIOSocket: RealtimeSocket, @unchecked Sendable {
    private var iterator: AsyncThrowingStream<String, any Error>.AsyncIterator
    private let outbound: WebSocketOutboundWriter
    private let channel: any Channel

    init(messages: AsyncThrowingStream<String, any Error>, outbound: WebSocketOutboundWriter, channel: any Channel) {
        self.iterator = messages.makeAsyncIterator()
        self.outbound = outbound
        self.channel = channel
    }

    func receive() async throws -> String? {
        try await iterator.next()
    }

    func send(_ text: String) async throws {
        try await outbound.writeTextMessage(text)
    }

    func close() async {
        do {
            try await outbound.close(.normalClosure, reason: nil)
        } catch {
            // The close frame did not go out (NIO refuses a write from a cancelled task, for
            // one), yet the WebSocket counts its close as sent: the transport would wait its
            // whole close timeout for an answer that cannot come.
            cut()
        }
    }

    func abandon() async {
        // Waiting for the server's answer to a close (`closeTimeout`, 5 s by default) would
        // hold the reconnect back that long for a close nobody will answer.
        cut()
    }

    /// Ends the connection at once, beneath TLS. TLS's own close waits out the configuration's
    /// `shutdownTimeout` (5 s by default) on these connections, whose half-closure is allowed:
    /// the server's close_notify does not end it. Over TLS a reader still waiting then ends with
    /// `NIOSSLError.uncleanShutdown` rather than `nil`, and the server sees no close_notify.
    func cut() {
        let channel = channel
        channel.eventLoop.execute {
            do {
                // A close from the TLS handler's place in the pipeline passes it by.
                try channel.pipeline.syncOperations.context(handlerType: NIOSSLClientHandler.self).close(promise: nil)
            } catch {
                // A plain connection has no TLS handler, and a closed one no handlers at all.
                channel.close(promise: nil)
            }
        }
    }
}
