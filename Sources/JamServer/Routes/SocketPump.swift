import HummingbirdWebSocket
import JamProtocol
import Logging

/// Runs one accepted socket: a writer draining the connection's outbox and a reader
/// feeding the session, plus an optional idle watchdog. Whichever ends first ends
/// the connection; the session is told the socket is gone in every case.
struct SocketPump {
    /// How long a close frame may wait behind a full socket.
    static let closeGrace: Duration = .seconds(5)

    /// Some WebSocket clients (NIO-based ones among them) lose a frame that arrives in the
    /// same read as the `101 Switching Protocols` response, so nothing is sent on a new
    /// socket until it is this old.
    static let firstFrameDelay: Duration = .milliseconds(100)

    /// Waits out `firstFrameDelay` for a socket accepted at `opened`.
    static func settle(since opened: ContinuousClock.Instant) async throws {
        let ready = opened + firstFrameDelay
        if ContinuousClock.now < ready { try await Task.sleep(until: ready) }
    }

    let connection: Connection
    let session: LiveSession
    let clock: any ServerClock
    /// Close with 4008 after this long without a message from the client.
    var idleTimeoutMs: Int64?

    /// When the socket was accepted.
    var opened = ContinuousClock.now

    func run(outbound: WebSocketOutboundWriter, read: @escaping @Sendable () async throws -> Void) async throws {
        connection.heard(at: clock.now())
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await write(to: outbound) }
                group.addTask { try await read() }
                if let idleTimeoutMs {
                    group.addTask { try await watchIdle(timeoutMs: idleTimeoutMs) }
                }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            await session.detach(connection)
            throw error
        }
        await session.detach(connection)
    }

    /// Drains the outbox into the socket, then sends the close the session asked for.
    /// A stalled reader's backlog is abandoned, and its close frame gets `closeGrace`
    /// to go out before the connection is dropped anyway.
    private func write(to outbound: WebSocketOutboundWriter) async throws {
        try await Self.settle(since: opened)
        for await frame in connection.frames {
            if connection.closeRequest?.code == 4429 { break }
            try await outbound.write(.text(frame))
        }
        guard let close = connection.closeRequest else { return }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await outbound.close(.init(codeNumber: Int(close.code)), reason: close.reason) }
            group.addTask { try await Task.sleep(for: SocketPump.closeGrace) }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Closes the connection once the client has been silent for `timeoutMs`.
    private func watchIdle(timeoutMs: Int64) async throws {
        while true {
            let silent = clock.now() - connection.lastHeardAt
            if silent >= timeoutMs {
                connection.close(code: PirateRadio.CloseCode.idle, reason: "idle for \(timeoutMs / 1000) s")
                // The writer sends the close and ends the connection.
                try await Task.sleep(for: .seconds(3600))
                return
            }
            try await Task.sleep(for: .milliseconds(timeoutMs - silent))
        }
    }
}
