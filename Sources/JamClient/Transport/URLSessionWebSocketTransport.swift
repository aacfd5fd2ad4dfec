import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JamProtocol

/// The realtime transport on `URLSessionWebSocketTask`: what an iOS or macOS app has
/// without further packages. On Linux, Foundation runs URLSession on libcurl and opens
/// WebSockets only when it was built with libcurl's WebSocket API; the Swift 6.3
/// toolchains for Linux are not, so there connecting fails at once with a `JamError`
/// (`internal`) that says so, and `SessionClient` stops instead of retrying. Use
/// `NIOWebSocketTransport` from `JamClientNIO` on such systems.
public struct URLSessionWebSocketTransport: RealtimeTransport {
    /// Largest message accepted from the server (queue updates of big sessions are large).
    public var maxMessageSize: Int
    /// How long the opening handshake may take.
    public var openTimeout: Duration

    /// Creates the transport.
    public init(maxMessageSize: Int = 1 << 22, openTimeout: Duration = .seconds(10)) {
        self.maxMessageSize = maxMessageSize
        self.openTimeout = openTimeout
    }

    /// How long URLSession lets a socket go without data, s. The open has its own limit
    /// (`openTimeout`, enforced here), and a dead open socket is the connection watch's to
    /// find; URLSession's timer resets only when data arrives, so a bound near the open's
    /// would end a quiet session's healthy socket before the watch's probe (15 s) is due.
    static let idleTimeout: TimeInterval = 120

    /// The handshake's request.
    static func request(url: URL, headers: [String: String]) -> URLRequest {
        var request = URLRequest(url: url)
        request.timeoutInterval = idleTimeout
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Opens a WebSocket to `url` with URLSession, runs `body` with it, and returns how it closed.
    public func withSocket(
        url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void
    ) async throws -> RealtimeClose {
        let request = Self.request(url: url, headers: headers)
        let events = SocketEvents()
        // A session per socket: its delegate reports the opening and closing handshakes,
        // which the task's own API only shows as a failed receive.
        let session = URLSession(configuration: .ephemeral, delegate: events, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: request)
        task.maximumMessageSize = maxMessageSize
        task.resume()
        try await events.waitUntilOpen(timeout: openTimeout, url: url)
        let socket = URLSessionSocket(task: task)
        do {
            try await body(socket)
        } catch {
            task.cancel(with: .goingAway, reason: nil)
            throw error
        }
        if let close = events.close { return close }
        // The body stopped on its own: close, and report the server's answer if it came.
        task.cancel(with: .normalClosure, reason: nil)
        return events.close ?? RealtimeClose(code: task.closeCode == .invalid ? nil : UInt16(task.closeCode.rawValue), reason: task.closeReason.map { String(decoding: $0, as: UTF8.self) })
    }
}

/// One `URLSessionWebSocketTask`; `receive()` is called by one task at a time.
final class URLSessionSocket: RealtimeSocket, @unchecked Sendable {
    private let task: URLSessionWebSocketTask

    init(task: URLSessionWebSocketTask) {
        self.task = task
    }

    func receive() async throws -> String? {
        while true {
            let message: URLSessionWebSocketTask.Message
            do {
                message = try await task.receive()
            } catch {
                // A close, by either side, ends the messages; anything else is a failure.
                if task.closeCode != .invalid || task.state != .running { return nil }
                throw error
            }
            switch message {
            case .string(let text): return text
            // OpenJam speaks text; a binary message is not part of the protocol, so it is skipped.
            case .data: continue
            @unknown default: continue
            }
        }
    }

    func send(_ text: String) async throws {
        try await task.send(.string(text))
    }

    func close() async {
        task.cancel(with: .normalClosure, reason: nil)
    }
}

/// The delegate that turns the task's handshakes into something to await.
final class SocketEvents: NSObject, URLSessionWebSocketDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var opened: Result<Void, any Error>?
    private var waiter: CheckedContinuation<Void, any Error>?
    private var closed: RealtimeClose?

    /// How the server closed the socket, once it has.
    var close: RealtimeClose? { lock.withLock { closed } }

    /// Returns once the socket opened; throws why it did not, when `timeout` passes first,
    /// or when the caller is cancelled.
    func waitUntilOpen(timeout: Duration, url: URL) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        let result: Result<Void, any Error>? = self.lock.withLock {
                            if let opened = self.opened { return opened }
                            self.waiter = continuation
                            return nil
                        }
                        if let result { continuation.resume(with: result) }
                    }
                } onCancel: {
                    self.settle(.failure(CancellationError()))
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                // Thrown here too: whichever task the group hears from first, the wait fails.
                let late = WebSocketOpenError.timedOut("\(url)", after: timeout)
                self.settle(.failure(late))
                throw late
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func settle(_ result: Result<Void, any Error>) {
        let waiter: CheckedContinuation<Void, any Error>? = lock.withLock {
            guard opened == nil else { return nil }
            opened = result
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(with: result)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        settle(.success(()))
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        lock.withLock {
            closed = RealtimeClose(code: closeCode == .invalid ? nil : UInt16(closeCode.rawValue), reason: reason.map { String(decoding: $0, as: UTF8.self) })
        }
        settle(.failure(WebSocketOpenError(description: "the WebSocket closed while opening (code \(closeCode.rawValue))")))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error = error as? URLError, error.code == .unsupportedURL, task.originalRequest?.url?.scheme?.hasPrefix("ws") == true {
            // Retrying cannot help: this Foundation has no WebSockets at all.
            settle(.failure(JamError(.internal, "this system's Foundation cannot open WebSockets (\(error.localizedDescription)); use NIOWebSocketTransport from JamClientNIO")))
            return
        }
        let status = (task.response as? HTTPURLResponse).map { " (HTTP \($0.statusCode))" } ?? ""
        let reason = error.map { "\($0.localizedDescription)" } ?? "the connection ended"
        settle(.failure(WebSocketOpenError(description: "the WebSocket to \(task.originalRequest?.url?.absoluteString ?? "?") could not open\(status): \(reason)")))
    }
}
