import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOWebSocket

/// One server frame `{"type", "data", "epoch", "seq", "timestamp"}` as received.
struct Frame: @unchecked Sendable, CustomStringConvertible {
    /// The frame as parsed (immutable after creation).
    let object: JSONObject
    let text: String
    /// When the test received it.
    let receivedAt: ContinuousClock.Instant

    var type: String { object.string("type") ?? "<no type>" }
    /// `data` as an object (empty when it is not one).
    var data: JSONObject { object.object("data") ?? [:] }
    var rawData: Any? { object["data"] }
    var epoch: Int? { object.int("epoch") }
    var seq: Int? { object.int("seq") }
    var timestamp: Int? { object.int("timestamp") }

    var description: String {
        let epoch = self.epoch.map(String.init) ?? "?"
        let seq = self.seq.map(String.init) ?? "?"
        return "\(type)(e\(epoch) s\(seq))"
    }
}

/// A raw PirateRadio WebSocket client: records every frame, lets a test wait for one, and
/// captures the server's close code.
final class PirateSocket: Sendable {
    let label: String
    private let inbox = Inbox()
    private let outgoing: AsyncStream<Outgoing>.Continuation

    /// A message on its way out: text, or the same JSON in a binary frame.
    enum Outgoing: Sendable {
        case text(String)
        case binary(Data)
    }
    private let task: Task<WebSocketCloseFrame?, any Error>

    private actor Inbox {
        var frames: [Frame] = []
        var undecodable: [String] = []
        var cursor = 0
        var finished = false
        var failure: String?

        func append(_ text: String) {
            if let object = parseJSONObject(Data(text.utf8)) {
                frames.append(Frame(object: object, text: text, receivedAt: .now))
            } else {
                undecodable.append(text)
            }
        }

        func finish(_ failure: String?) {
            finished = true
            self.failure = failure
        }

        func take(where predicate: @Sendable (Frame) -> Bool) -> Frame? {
            guard cursor < frames.count, let index = frames[cursor...].firstIndex(where: predicate) else { return nil }
            cursor = index + 1
            return frames[index]
        }

        func markRead() -> Int {
            cursor = frames.count
            return cursor
        }
    }

    /// Connects to `/<path>?token=<token>&sessionId=<session>` (either may be left out), on the
    /// server's port or on `port` (a relay's in front of it).
    init(_ server: PirateServer, token: String?, session: String?, path: String = "/", port: Int? = nil, label: String? = nil) {
        var query: [String] = []
        if let token { query.append("token=\(Self.escape(token))") }
        if let session { query.append("sessionId=\(Self.escape(session))") }
        let base = port.map { "ws://127.0.0.1:\($0)" } ?? server.webSocketBaseURL
        let url = base + path + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        self.label = label ?? "socket"
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 22, closeTimeout: .seconds(2))
        let (stream, continuation) = AsyncStream.makeStream(of: Outgoing.self)
        outgoing = continuation
        let inbox = self.inbox
        let label = self.label
        task = Task {
            do {
                let close = try await WebSocketClient.connect(
                    url: url, configuration: configuration, logger: Logger(label: "pirate-socket-\(label)")
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await message in stream {
                                switch message {
                                case .text(let text): try await outbound.write(.text(text))
                                case .binary(let bytes): try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                                }
                            }
                            try? await outbound.close(.normalClosure, reason: nil)
                        }
                        for try await message in inbound.messages(maxSize: 1 << 24) {
                            if case .text(let text) = message { await inbox.append(text) }
                        }
                        group.cancelAll()
                    }
                }
                await inbox.finish(nil)
                return close
            } catch {
                await inbox.finish("\(error)")
                throw error
            }
        }
        server.register(self)
    }

    deinit {
        outgoing.finish()
    }

    private static func escape(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=?#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    // MARK: Sending

    /// Sends `{"type": type, "data": data}` (no `data` key when nil).
    func send(_ type: String, _ data: Any? = nil) {
        var frame: JSONObject = ["type": type]
        if let data { frame["data"] = data }
        outgoing.yield(.text(jsonString(frame)))
    }

    /// Sends `{"type": type, "data": data}` in a binary frame, as the PirateRadio app does.
    func sendBinary(_ type: String, _ data: Any? = nil) {
        var frame: JSONObject = ["type": type]
        if let data { frame["data"] = data }
        outgoing.yield(.binary(Data(jsonString(frame).utf8)))
    }

    /// Sends text verbatim.
    func sendRaw(_ text: String) {
        outgoing.yield(.text(text))
    }

    // MARK: Receiving

    /// The next frame (after the last one taken) of `type` that matches, waiting up to `timeout`.
    /// Frames skipped over are not returned again by `next`, but stay in `frames`.
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    @discardableResult
    func next(_ type: String, timeout: Duration = .seconds(15), _ what: String = "", where predicate: @escaping @Sendable (Frame) -> Bool = { _ in true }) async throws -> Frame {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = await inbox.take(where: { $0.type == type && predicate($0) }) { return found }
            if await inbox.finished {
                // One last look: the frame may have arrived just before the end.
                if let found = await inbox.take(where: { $0.type == type && predicate($0) }) { return found }
                throw TestFailure("\(label): the socket ended (\(await endDescription())) while waiting for \(type) \(what); received: \(await summary())")
            }
            if ContinuousClock.now >= deadline {
                throw TestFailure("\(label): timed out after \(timeout) waiting for \(type) \(what); received: \(await summary())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every frame received so far.
    var frames: [Frame] {
        get async { await inbox.frames }
    }

    /// Frames of `type` received so far.
    func frames(_ type: String) async -> [Frame] {
        await inbox.frames.filter { $0.type == type }
    }

    /// Text frames that were not JSON objects.
    var undecodable: [String] {
        get async { await inbox.undecodable }
    }

    /// Marks everything received so far as read; returns how many frames that is.
    @discardableResult
    func skipReceived() async -> Int {
        await inbox.markRead()
    }

    /// The frames received so far, as "type(e epoch s seq)" for failure messages.
    func summary() async -> String {
        let frames = await inbox.frames.map(\.description).joined(separator: ", ")
        let bad = await inbox.undecodable
        return "[\(frames)]" + (bad.isEmpty ? "" : " undecodable: \(bad)")
    }

    private func endDescription() async -> String {
        if let failure = await inbox.failure { return "failed: \(failure)" }
        if let code = await closeCodeIfClosed() { return "closed with \(code)" }
        return "closed"
    }

    /// Whether the socket has ended.
    var isClosed: Bool {
        get async { await inbox.finished }
    }

    // MARK: Closing

    /// Closes from the client side and waits for the close handshake.
    func close() async {
        outgoing.finish()
        _ = try? await task.value
    }

    private func closeCodeIfClosed() async -> Int? {
        guard await inbox.finished, let frame = try? await task.value else { return nil }
        return Self.number(frame.closeCode)
    }

    /// Waits until the server closes the socket and returns its close code (nil if there was no close frame).
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    func closeCode(timeout: Duration = .seconds(15)) async throws -> Int? {
        let deadline = ContinuousClock.now + timeout
        while !(await inbox.finished) {
            if ContinuousClock.now >= deadline {
                throw TestFailure("\(label): the server did not close the socket within \(timeout); received: \(await summary())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        if let failure = await inbox.failure {
            throw TestFailure("\(label): the connection failed instead of closing with a code: \(failure)")
        }
        guard let frame = try? await task.value else { return nil }
        return Self.number(frame.closeCode)
    }

    static func number(_ code: WebSocketErrorCode) -> Int {
        Int(UInt16(webSocketErrorCode: code))
    }
}
