import Foundation
import JamClient
import JamProtocol

/// A socket that hands the client scripted server frames and keeps what it sends.
actor ScriptedSocket: RealtimeSocket {
    private var incoming: [String] = []
    private var closed = false
    private var answeredPings = 0
    private(set) var sent: [String] = []
    /// Whether `receive` goes on waiting when its caller is cancelled, as URLSession's does:
    /// only a close ends it.
    private let ignoresCancellation: Bool

    init(ignoresCancellation: Bool = false) {
        self.ignoresCancellation = ignoresCancellation
    }

    func push(_ envelope: ServerEnvelope) { incoming.append(envelope.jsonString()) }
    func push(_ text: String) { incoming.append(text) }

    func receive() async throws -> String? {
        while true {
            if !incoming.isEmpty { return incoming.removeFirst() }
            if closed { return nil }
            if ignoresCancellation {
                // Its own task, which the caller's cancellation does not reach.
                try await Task.detached { try await Task.sleep(for: .milliseconds(2)) }.value
            } else {
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// Whether a send waits until the socket closes, as one does on a dead path whose send
    /// buffer is full (the frame is kept as sent all the same).
    private var holdsSends = false

    func holdSends() { holdsSends = true }

    func send(_ text: String) async throws {
        sent.append(text)
        while holdsSends, !closed { try await Task.sleep(for: .milliseconds(2)) }
    }
    func close() async { closed = true }

    /// Whether the client closed the socket.
    var isClosed: Bool { closed }

    /// Pushed frames the client has not read yet.
    var pending: Int { incoming.count }

    /// Every frame sent so far, in order.
    func frames() throws -> [ClientFrame] {
        try sent.map { try ClientFrame.decode(Data($0.utf8)) }
    }

    /// Every command sent so far, in order.
    func commands() throws -> [ClientCommand] {
        try sent.map { try ClientFrame.decode(Data($0.utf8)).command }
    }

    /// Answers every ping sent so far that has no answer yet, as the server does.
    func answerPings() throws {
        let pings = try commands().compactMap { command -> Ping? in
            if case .ping(let ping) = command { return ping }
            return nil
        }
        for ping in pings.dropFirst(answeredPings) {
            push(ServerEnvelope(event: .pong(Pong(clientSendTime: ping.clientSendTime, serverReceiveTime: 1, serverSendTime: 1)), epoch: 0, seq: 0, timestamp: 0))
        }
        answeredPings = pings.count
    }

    /// The `lastSeq` of every `hello` sent so far (`.some(nil)`: the whole state).
    func hellos() throws -> [Int64?] {
        try sent.compactMap { text in
            if case .hello(let hello) = try ClientFrame.decode(Data(text.utf8)).command { return .some(hello.lastSeq) }
            return nil
        }
    }
}

/// A transport whose every connection is the one scripted socket.
struct ScriptedTransport: RealtimeTransport {
    let socket: ScriptedSocket
    func withSocket(url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void) async throws -> RealtimeClose {
        try await body(socket)
        return RealtimeClose(code: 1000, reason: nil)
    }
}

/// A transport that cannot connect, for the reason it is given.
struct RefusingTransport: RealtimeTransport {
    let reason: JamError
    func withSocket(url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void) async throws -> RealtimeClose {
        throw reason
    }
}

/// A transport whose connections are the given sockets in turn, each ending with its close
/// (1000 when none is given); the first, once its body is cancelled, closes only when
/// `firstClose` lets it, as a close handshake can take its time.
actor SocketsInTurn: RealtimeTransport {
    private var sockets: [ScriptedSocket]
    private let closes: [RealtimeClose]
    private let firstClose: HeldSleeper?
    private var opened = 0

    init(_ sockets: [ScriptedSocket], closes: [RealtimeClose] = [], firstClose: HeldSleeper? = nil) {
        self.sockets = sockets
        self.closes = closes
        self.firstClose = firstClose
    }

    nonisolated func withSocket(url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void) async throws -> RealtimeClose {
        let (socket, index) = await next()
        // The first socket's close is held however its body ended: a cancelled run's body can
        // throw (its watch was cancelled) or return (its read saw the socket closed first).
        do {
            try await body(socket)
        } catch {
            if index == 0, let firstClose { try await firstClose.sleep(ms: 0) }
            throw error
        }
        if index == 0, let firstClose { try await firstClose.sleep(ms: 0) }
        return index < closes.count ? closes[index] : RealtimeClose(code: 1000, reason: nil)
    }

    private func next() -> (ScriptedSocket, Int) {
        opened += 1
        let index = min(opened, sockets.count) - 1
        return (sockets[index], index)
    }
}
