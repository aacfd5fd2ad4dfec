import JamTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWSClient
import JamProtocol
import Logging

/// A realtime client for tests: records every envelope and lets a test wait for one.
final class TestSocket: Sendable {
    private let inbox = Inbox()
    private let outgoing: AsyncStream<String>.Continuation
    private let readGate: AsyncStream<Void>.Continuation
    private let task: Task<WebSocketCloseFrame?, any Error>

    private actor Inbox {
        var envelopes: [ServerEnvelope] = []
        var undecodable: [String] = []
        var cursor = 0
        var finished = false
        var failure: String?

        func append(_ text: String) {
            do {
                envelopes.append(try ServerEnvelope.decode(Data(text.utf8)))
            } catch {
                undecodable.append(text)
            }
        }

        func finish(_ failure: String? = nil) {
            finished = true
            self.failure = failure
        }

        func take(where predicate: (ServerEnvelope) -> Bool) -> ServerEnvelope? {
            guard let index = envelopes[cursor...].firstIndex(where: predicate) else { return nil }
            cursor = index + 1
            return envelopes[index]
        }
    }

    /// Connects to a session's realtime endpoint.
    /// - Parameter paused: when true the client does not read until `resumeReading()`.
    /// - Parameter forwardedFor: an `X-Forwarded-For` header, as a proxy in front of the server sends it.
    convenience init(
        server: TestServer, session: SessionID, token: String?, lastSeq: Int64? = nil, paused: Bool = false, path: String? = nil,
        forwardedFor: String? = nil
    ) {
        self.init(wsBaseURL: server.wsBaseURL, session: session, token: token, lastSeq: lastSeq, paused: paused, path: path, forwardedFor: forwardedFor)
    }

    /// Connects to a session's realtime endpoint on the server at `wsBaseURL` (a server process, say).
    init(
        wsBaseURL: String, session: SessionID, token: String?, lastSeq: Int64? = nil, paused: Bool = false, path: String? = nil,
        forwardedFor: String? = nil
    ) {
        var url = wsBaseURL + (path ?? "/api/v1/sessions/\(session)/realtime")
        if let lastSeq { url += "?lastSeq=\(lastSeq)" }
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let forwardedFor { headers[HTTPField.Name("X-Forwarded-For")!] = forwardedFor }
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20, additionalHeaders: headers, closeTimeout: .seconds(2))
        let (outStream, outContinuation) = AsyncStream.makeStream(of: String.self)
        let (gateStream, gateContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        outgoing = outContinuation
        readGate = gateContinuation
        if !paused { gateContinuation.yield() }
        let inbox = self.inbox
        task = Task {
            do {
                let close = try await Self.run(url: url, configuration: configuration, outStream: outStream, gateStream: gateStream, inbox: inbox)
                await inbox.finish()
                return close
            } catch {
                await inbox.finish("\(error)")
                throw error
            }
        }
    }

    private static func run(
        url: String, configuration: WebSocketClientConfiguration, outStream: AsyncStream<String>, gateStream: AsyncStream<Void>, inbox: Inbox
    ) async throws -> WebSocketCloseFrame? {
            try await WebSocketClient.connect(url: url, configuration: configuration, logger: Logger(label: "test-socket")) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in outStream { try await outbound.write(.text(text)) }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    var gate = gateStream.makeAsyncIterator()
                    _ = await gate.next()
                    for try await message in inbound.messages(maxSize: 1 << 24) {
                        if case .text(let text) = message { await inbox.append(text) }
                    }
                    group.cancelAll()
                }
            }
    }

    deinit {
        // A socket a test forgot (or failed before closing) must not hold up the server's shutdown.
        readGate.yield()
        outgoing.finish()
    }

    /// Starts reading after a paused start.
    func resumeReading() { readGate.yield() }

    /// Sends a command frame.
    func send(_ command: ClientCommand, id: String? = nil) {
        outgoing.yield(ClientFrame(command, id: id).jsonString())
    }

    /// Sends raw text (for malformed-input tests).
    func sendRaw(_ text: String) {
        outgoing.yield(text)
    }

    /// The next envelope after the last one taken that matches, waiting up to `timeout`.
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    @discardableResult
    func next(_ description: String = "event", timeout: Duration = .seconds(15), where predicate: @escaping @Sendable (ServerEnvelope) -> Bool) async throws -> ServerEnvelope {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = await inbox.take(where: predicate) { return found }
            if await inbox.finished, let failure = await inbox.failure {
                throw TestFailure("the socket failed while waiting for \(description): \(failure)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let seen = await inbox.envelopes.map { envelope in
            let said = envelope.error.map { " (\($0.code.rawValue): \($0.message))" } ?? ""
            return "\(envelope.event.type.rawValue)#\(envelope.seq)\(said)"
        }.joined(separator: ", ")
        throw TestFailure("timed out waiting for \(description); received: \(seen)")
    }

    /// The next envelope of `type`.
    @discardableResult
    func next(_ type: ServerEventType, timeout: Duration = .seconds(15)) async throws -> ServerEnvelope {
        try await next(type.rawValue, timeout: timeout) { $0.event.type == type }
    }

    /// Every envelope received so far.
    var received: [ServerEnvelope] {
        get async { await inbox.envelopes }
    }

    /// Frames that did not decode as envelopes (should stay empty).
    var undecodable: [String] {
        get async { await inbox.undecodable }
    }

    /// Closes from the client side and returns the server's close frame.
    @discardableResult
    func close() async -> WebSocketCloseFrame? {
        outgoing.finish()
        readGate.yield()
        return try? await task.value
    }

    /// Whether the socket is still open (the server has not closed it).
    var isOpen: Bool {
        get async { !(await inbox.finished) }
    }

    /// Waits for the server to close the socket; returns its close frame.
    /// (15 s by default: a busy CI machine runs ~1,150 tests on 2 cores.)
    func closedByServer(timeout: Duration = .seconds(15)) async throws -> WebSocketCloseFrame? {
        readGate.yield()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await inbox.finished { return try? await task.value }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("the server did not close the socket")
    }
}

extension ServerEnvelope {
    /// The payload of a `stateSync`, if this is one.
    var stateSync: SessionView? { if case .stateSync(let v) = event { v } else { nil } }
    var queueUpdate: [QueueItem]? { if case .queueUpdate(let v) = event { v.queue } else { nil } }
    var queueItemAdded: QueueItemAdded? { if case .queueItemAdded(let v) = event { v } else { nil } }
    var votesUpdate: VotesUpdate? { if case .votesUpdate(let v) = event { v } else { nil } }
    var playPrepare: PlayPrepare? { if case .playPrepare(let v) = event { v } else { nil } }
    var playCommit: PlayCommit? { if case .playCommit(let v) = event { v } else { nil } }
    var ack: Ack? { if case .ack(let v) = event { v } else { nil } }
    var error: ErrorEvent? { if case .error(let v) = event { v } else { nil } }
    var skipRequests: SkipRequestsUpdate? { if case .skipRequests(let v) = event { v } else { nil } }
    var memberLeft: MemberLeft? { if case .memberLeft(let v) = event { v } else { nil } }
    var memberJoined: Member? { if case .memberJoined(let v) = event { v } else { nil } }
    var pong: Pong? { if case .pong(let v) = event { v } else { nil } }
    var stopped: PlaybackStopped? { if case .stopped(let v) = event { v } else { nil } }
    var deviceDelay: DeviceDelay? { if case .deviceDelay(let v) = event { v } else { nil } }
    var syncStatus: SyncStatusUpdate? { if case .syncStatus(let v) = event { v } else { nil } }
    var calibration: CalibrationPlan? { if case .calibration(let v) = event { v } else { nil } }
    var calibrationResult: CalibrationOutcome? { if case .calibrationResult(let v) = event { v } else { nil } }
    var resync: Resync? { if case .resync(let v) = event { v } else { nil } }
    var myChoices: MyChoices? { if case .myChoices(let v) = event { v } else { nil } }
}
