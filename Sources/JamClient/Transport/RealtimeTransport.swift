import Foundation

/// How a realtime socket ended.
public struct RealtimeClose: Sendable, Equatable {
    /// The WebSocket close code the server sent, if any.
    public var code: UInt16?
    /// Its reason text.
    public var reason: String?

    /// Creates a close description.
    public init(code: UInt16?, reason: String?) {
        self.code = code
        self.reason = reason
    }
}

/// One open WebSocket, used by one task at a time.
public protocol RealtimeSocket: Sendable {
    /// The next text message; `nil` once the socket is closed.
    func receive() async throws -> String?
    /// Sends a text message.
    func send(_ text: String) async throws
    /// Closes from the client side.
    func close() async
    /// Ends the socket at once, without the closing handshake: for a connection the server
    /// no longer answers on, whose close would wait out the transport's close timeout.
    func abandon() async
}

extension RealtimeSocket {
    /// A transport whose close does not wait for the server's answer abandons by closing.
    public func abandon() async { await close() }
}

/// Opens WebSockets: `URLSessionWebSocketTransport` here, `NIOWebSocketTransport` in
/// `JamClientNIO`.
public protocol RealtimeTransport: Sendable {
    /// Connects to `url` and runs `body` with the open socket; returns how it closed.
    /// Throws when the connection cannot be made.
    func withSocket(
        url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void
    ) async throws -> RealtimeClose
}

/// Failures of the opening handshake, in either transport.
public struct WebSocketOpenError: Error, CustomStringConvertible {
    /// What went wrong, for people.
    public let description: String

    /// Creates the error with what went wrong.
    public init(description: String) {
        self.description = description
    }

    /// The open of the WebSocket to `address` took longer than `limit`.
    public static func timedOut(_ address: String, after limit: Duration) -> WebSocketOpenError {
        WebSocketOpenError(description: "the WebSocket to \(address) did not open within \(limit)")
    }
}
