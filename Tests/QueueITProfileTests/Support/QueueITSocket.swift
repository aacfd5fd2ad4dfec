import Foundation
import HTTPTypes
import HummingbirdWSClient
import JamTestSupport
import Logging
import NIOCore

/// A raw WebSocket on `/api/v1/sessions/{id}/realtime`, as the app's socket client opens it
/// (the token in `Authorization: Bearer`), collecting every event it is sent.
final class QueueITSocket: Sendable {
    /// Texts as they came; parsed by the caller (JSON objects are not `Sendable`).
    private actor Inbox {
        var texts: [(event: String?, text: String)] = []
        var closed: String?
        var cursor = 0

        func append(_ text: String) {
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? JSONObject
            texts.append((object?.string("event"), text))
        }

        func finish(_ reason: String) { closed = reason }

        func take(_ name: String) -> String? {
            guard let index = texts[cursor...].firstIndex(where: { $0.event == name }) else { return nil }
            cursor = index + 1
            return texts[index].text
        }

        func skipAll() { cursor = texts.count }

        var all: String { texts.map(\.text).joined(separator: "\n") }
    }

    private let inbox = Inbox()
    private let task: Task<Void, Never>
    private let outgoing: AsyncStream<String>.Continuation

    init(base: String, sessionId: String, token: String?) {
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/api/v1/sessions/\(sessionId)/realtime"
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 22, additionalHeaders: headers, closeTimeout: .seconds(2))
        let inbox = self.inbox
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        outgoing = continuation
        task = Task {
            do {
                let close = try await WebSocketClient.connect(url: url, configuration: configuration, logger: Logger(label: "queueit-socket")) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await text in stream { try await outbound.write(.text(text)) }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 24) {
                            if case .text(let text) = message { await inbox.append(text) }
                        }
                        group.cancelAll()
                    }
                }
                await inbox.finish("closed \(close.map { "\($0.closeCode)" } ?? "without a code")")
            } catch {
                await inbox.finish("failed: \(error)")
            }
        }
    }

    /// The next event called `name`, waiting up to `seconds`.
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    func next(_ name: String, within seconds: Double = 15) async throws -> JSONObject {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if let text = await inbox.take(name) {
                guard let event = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? JSONObject else { throw TestFailure("not a JSON object: \(text)") }
                return event
            }
            if let closed = await inbox.closed { throw TestFailure("the socket \(closed) before a \(name) event; got \(await inbox.all)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("no \(name) event within \(seconds) s; got \(await inbox.all)")
    }

    /// Forgets what arrived so far.
    func skipAll() async { await inbox.skipAll() }

    /// How the socket ended (nil while open), waiting up to `seconds`.
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    func closed(within seconds: Double = 15) async throws -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if let closed = await inbox.closed { return closed }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("the socket did not close within \(seconds) s")
    }

    /// Sends a text message.
    func send(_ text: String) async throws {
        outgoing.yield(text)
    }

    func close() {
        outgoing.finish()
        task.cancel()
    }
}
