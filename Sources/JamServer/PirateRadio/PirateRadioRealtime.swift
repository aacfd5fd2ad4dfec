import Foundation
import Hummingbird
import HummingbirdWebSocket
import JamProtocol
import Logging

/// PirateRadio's socket: any path, `?token=&sessionId=`.
struct PirateRadioRealtime {
    let registry: SessionRegistry
    let tokens: PirateRadioTokens
    let clock: any ServerClock
    let options: PirateRadioOptions
    let maxFrameBytes: Int
    let outboxLimit: Int

    /// Upgrades every WebSocket request, whatever its path.
    var middleware: WebSocketUpgradeMiddleware<JamRequestContext> {
        WebSocketUpgradeMiddleware { inbound, outbound, context in
            let opened = ContinuousClock.now
            let logger = context.logger
            let session: LiveSession
            let connection: Connection
            do throws(JamError) {
                (session, connection) = try await open(context.request)
            } catch {
                try await SocketPump.settle(since: opened)
                let close = error.code.pirateRadioClose
                try await outbound.close(.init(codeNumber: Int(close)), reason: String(error.message.utf8.prefix(120)) ?? "refused")
                return
            }
            var pump = SocketPump(connection: connection, session: session, clock: clock, idleTimeoutMs: options.idleTimeoutMs)
            pump.opened = opened
            try await pump.run(outbound: outbound) {
                try await read(inbound, from: connection, into: session, logger: logger)
            }
        }
    }

    private func open(_ request: Request) async throws(JamError) -> (LiveSession, Connection) {
        let query = request.uri.queryParameters
        guard let token = query["token"], !token.isEmpty else { throw JamError(.unauthorized, "missing token") }
        let identity = try tokens.verify(String(token))
        guard let raw = query["sessionId"], let id = JamID.uuid(String(raw)) else { throw JamError(.notFound, "unknown session") }
        let session = try await registry.session(id)
        let connection = Connection(userId: identity.userId, limit: outboxLimit)
        try await session.attach(connection, displayName: identity.displayName, lastSeq: nil)
        return (session, connection)
    }

    private func read(_ inbound: WebSocketInboundStream, from connection: Connection, into session: LiveSession, logger: Logger) async throws {
        for try await message in inbound.messages(maxSize: maxFrameBytes) {
            let receivedAt = clock.nowPrecise()
            connection.heard(at: Millis(receivedAt))
            switch message {
            case .text(let text):
                do {
                    let decoded = try PirateRadio.ClientMessage.decode(text)
                    await session.handle(pirate: decoded, from: connection, receivedAt: receivedAt)
                } catch {
                    logger.info("rejected a PirateRadio message", metadata: ["member.id": "\(connection.userId)", "error": "\(error.message)"])
                    await session.reject(error, id: nil, to: connection)
                }
            case .binary:
                await session.reject(JamError(.malformed, "binary frames are not supported; send JSON text"), id: nil, to: connection)
            }
        }
    }
}

extension ErrorCode {
    /// The close code PirateRadio uses for a refused socket.
    var pirateRadioClose: UInt16 {
        switch self {
        case .unauthorized: PirateRadio.CloseCode.unauthorized
        case .sessionFull: PirateRadio.CloseCode.full
        case .notFound, .gone, .notMember: PirateRadio.CloseCode.unknownSession
        default: 4000 + UInt16(min(httpStatus, 999))
        }
    }
}
