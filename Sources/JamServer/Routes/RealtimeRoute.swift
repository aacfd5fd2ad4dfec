import Foundation
import Hummingbird
import HummingbirdWebSocket
import JamProtocol
import Logging

/// `GET /api/v1/sessions/{id}/realtime`: the session's WebSocket.
///
/// Refusals are sent as an `error` event followed by a close code of 4000 + the HTTP
/// status (4401, 4403, 4404, 4410), because a refused upgrade could not say why.
struct RealtimeRoute {
    let registry: SessionRegistry
    let clock: any ServerClock
    let maxFrameBytes: Int
    let outboxLimit: Int

    func register(on router: Router<JamRequestContext>) {
        router.ws("api/v1/sessions/:id/realtime") { inbound, outbound, context in
            let opened = ContinuousClock.now
            let logger = context.logger
            let connection: Connection
            let session: LiveSession
            do {
                (session, connection) = try await open(context)
            } catch let error as JamError {
                try await SocketPump.settle(since: opened)
                try await refuse(error, outbound: outbound)
                return
            }
            var pump = SocketPump(connection: connection, session: session, clock: clock)
            pump.opened = opened
            try await pump.run(outbound: outbound) {
                try await read(inbound, from: connection, into: session, logger: logger)
            }
        }
    }

    /// Authenticates, finds the session and attaches the connection.
    private func open(_ context: WebSocketRouterContext<JamRequestContext>) async throws(JamError) -> (LiveSession, Connection) {
        let identity = try context.requestContext.requireIdentity()
        let path = context.request.uri.path.split(separator: "/")
        guard path.count == 5, let raw = path.dropFirst(3).first else { throw JamError(.notFound, "no such realtime path") }
        guard let id = JamID.uuid(String(raw)) else { throw JamError(.invalidField, "session id must be a UUID, got \"\(raw.prefix(64))\"") }
        var lastSeq: Int64?
        if let text = context.request.uri.queryParameters["lastSeq"] {
            guard let value = Int64(text), value >= 0 else { throw JamError(.invalidField, "lastSeq must be a non-negative integer") }
            lastSeq = value
        }
        let session = try await registry.session(id)
        let connection = Connection(userId: identity.userId, limit: outboxLimit)
        try await session.attach(connection, displayName: identity.displayName, lastSeq: lastSeq)
        return (session, connection)
    }

    private func refuse(_ error: JamError, outbound: WebSocketOutboundWriter) async throws {
        let frame = ServerEnvelope(event: .error(ErrorEvent(id: nil, code: error.code, message: error.message)), epoch: 0, seq: 0, timestamp: clock.now())
        try await outbound.write(.text(frame.jsonString()))
        let code = 4000 + min(error.code.httpStatus, 999)
        try await outbound.close(.init(codeNumber: code), reason: String(error.message.utf8.prefix(120)) ?? "refused")
    }

    /// Decodes each frame; a frame that does not decode is answered with a typed `error`.
    private func read(_ inbound: WebSocketInboundStream, from connection: Connection, into session: LiveSession, logger: Logger) async throws {
        for try await message in inbound.messages(maxSize: maxFrameBytes) {
            let receivedAt = clock.nowPrecise()
            connection.heard(at: Millis(receivedAt))
            switch message {
            case .text(let text):
                let data = Data(text.utf8)
                do {
                    let frame = try ClientFrame.decode(data)
                    await session.handle(frame, from: connection, receivedAt: receivedAt)
                } catch {
                    logger.info("rejected a realtime frame", metadata: ["member.id": "\(connection.userId)", "error.code": "\(error.code.rawValue)", "error": "\(error.message)"])
                    await session.reject(error, id: ClientFrame.salvageId(data), to: connection)
                }
            case .binary:
                await session.reject(JamError(.malformed, "binary frames are not supported; send JSON text"), id: nil, to: connection)
            }
        }
    }
}
