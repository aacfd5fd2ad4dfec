import Foundation
import HTTPTypes
import HummingbirdWSClient
import JamClient
import Logging
import NIOCore
import NIOWebSocket

/// The realtime transport on SwiftNIO (hummingbird-websocket's client): Linux, macOS, iOS.
public struct NIOWebSocketTransport: RealtimeTransport {
    /// Largest frame accepted from the server (queue updates of big sessions are large).
    public var maxFrameSize: Int
    /// How long a close waits for the server's answering close before the connection is cut:
    /// the whole wait when the client drops a socket the server stopped answering on.
    public var closeTimeout: Duration
    private let logger: Logger

    /// Creates the transport.
    public init(maxFrameSize: Int = 1 << 22, closeTimeout: Duration = .seconds(5), logger: Logger = Logger(label: "openjam.transport")) {
        self.maxFrameSize = maxFrameSize
        self.closeTimeout = closeTimeout
        self.logger = logger
    }

    /// Opens a WebSocket to `url` on NIO, runs `body` with it, and returns how it closed.
    public func withSocket(
        url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void
    ) async throws -> RealtimeClose {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields[field] = value
        }
        let configuration = WebSocketClientConfiguration(maxFrameSize: maxFrameSize, additionalHeaders: fields, closeTimeout: closeTimeout)
        let maxSize = maxFrameSize
        let close = try await WebSocketClient.connect(url: url.absoluteString, configuration: configuration, logger: logger) { inbound, outbound, _ in
            let (messages, continuation) = AsyncThrowingStream.makeStream(of: String.self)
            let socket = NIOSocket(messages: messages, outbound: outbound)
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
                try await body(socket)
                // The body ends when the socket closed (receive returned nil) or it chose to stop.
                group.cancelAll()
            }
        }
        return RealtimeClose(code: close.map { UInt16(webSocketErrorCode: $0.closeCode) }, reason: close?.reason)
    }
}

/// One NIO socket: received text arrives through a stream filled by the transport's reader.
/// `receive()` is called by one task at a time (the `RealtimeSocket` contract), which is
/// what makes the stored iterator safe to share.
final class NIOSocket: RealtimeSocket, @unchecked Sendable {
    private var iterator: AsyncThrowingStream<String, any Error>.AsyncIterator
    private let outbound: WebSocketOutboundWriter

    init(messages: AsyncThrowingStream<String, any Error>, outbound: WebSocketOutboundWriter) {
        self.iterator = messages.makeAsyncIterator()
        self.outbound = outbound
    }

    func receive() async throws -> String? {
        try await iterator.next()
    }

    func send(_ text: String) async throws {
        try await outbound.writeTextMessage(text)
    }

    func close() async {
        try? await outbound.close(.normalClosure, reason: nil)
    }
}
