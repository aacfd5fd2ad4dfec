import HTTPTypes
import Hummingbird
import HummingbirdCore
import JamProtocol
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket
import ServiceLifecycle

/// The server's connections: HTTP/1.1 for the REST API and the browser client, upgraded to a
/// WebSocket for the profile's realtime sockets.
///
/// A realtime socket leaves Hummingbird's asynchronous WebSocket API behind on purpose: after
/// the upgrade its pipeline ends in `RealtimeHandler`, which decodes messages on the socket's
/// loop and writes frames straight to the channel. Everything else is Hummingbird's own HTTP
/// handling (this type is modelled on its `HTTP1WebSocketUpgradeChannel`).
struct RealtimeServerChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        case realtime(NIOLoopBound<RealtimeHandler>, HTTPRequestHead, any Channel)
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let profile: any WireProfile
    let context: ProfileContext
    let maxFrameBytes: Int
    let timing: RealtimeHandler.Timing
    /// A connection's first request head must be in within this long.
    var headerTimeout: TimeAmount = .seconds(10)
    /// A kept-alive HTTP connection with no request under way closes after this long.
    var idleTimeout: Duration = .seconds(75)
    /// A request's body must be in within this long of its head.
    var bodyTimeout: TimeAmount = .seconds(30)
    /// Open sockets per client address; nil for no cap.
    var socketCaps: SocketCaps?
    /// Open connections per peer address (trusted proxies aside); nil for no cap.
    var connectionCaps: SocketCaps?
    /// Who a socket's client is, behind a trusted proxy too.
    var addresses = ClientAddresses(trustedProxies: [])

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let refused = admitConnection(channel) {
            // Closed before a byte is read, as HAProxy's connection limits do: answering would
            // mean holding the connection until its request came, which is what the cap is for.
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(Value(upgradeResult: channel.eventLoop.makeFailedFuture(refused), channel: channel))
        }
        return channel.eventLoop.makeCompletedFuture {
            let upgradeAttempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: maxFrameBytes,
                shouldUpgrade: { channel, head in
                    channel.eventLoop.makeSucceededFuture(profile.isRealtimeRequest(head) ? Self.upgradeHeaders(head) : nil)
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        let sink = RawFrameSink()
                        try channel.pipeline.syncOperations.addHandler(sink, position: .first)
                        let handler = RealtimeHandler(profile: profile, sink: sink, clock: context.clock, timing: timing, logger: logger)
                        try channel.pipeline.syncOperations.addHandler(ClientFrameCheck())
                        try channel.pipeline.syncOperations.addHandler(
                            NIOWebSocketFrameAggregator(minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 64, maxAccumulatedFrameSize: maxFrameBytes))
                        try channel.pipeline.syncOperations.addHandler(handler)
                        return .realtime(NIOLoopBound(handler, eventLoop: channel.eventLoop), head, channel)
                    }
                })
            let serverUpgrade = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandler(BodyDeadlineHandler(deadline: bodyTimeout))
                        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
                        let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        return upgradeAttempted.value ? .failedUpgrade(asyncChannel) : .notUpgraded(asyncChannel)
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: serverUpgrade)
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            configuration.enableResponseHeaderValidation = false
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            let upgradeHandler = try channel.pipeline.syncOperations.handler(type: NIOTypedHTTPServerUpgradeHandler<UpgradeResult>.self)
            // NIO keeps no copy of an upgrade request it goes on to: if the upgrade fails after
            // all (a WebSocket version other than 13, a key or version sent twice), all the
            // request can get is a refusal.
            let filter = UpgradeRequestFilter(takes: profile.isRealtimeRequest, passedOn: { upgradeAttempted.value = true })
            try channel.pipeline.syncOperations.addHandler(filter, position: .before(upgradeHandler))
            try channel.pipeline.syncOperations.addHandler(HeaderDeadlineHandler(deadline: headerTimeout), position: .first)
            let firstRequestErrors = FirstRequestErrorHandler()
            try channel.pipeline.syncOperations.addHandler(firstRequestErrors)
            let added = NIOLoopBound(firstRequestErrors, eventLoop: channel.eventLoop)
            result.whenComplete { _ in channel.pipeline.syncOperations.removeHandler(added.value, promise: nil) }
            return Value(upgradeResult: result, channel: channel)
        }
    }

    /// Counts `channel` against its peer's connection cap until it closes; the refusal when
    /// the peer holds the cap already. A trusted proxy's connections are not counted.
    private func admitConnection(_ channel: any Channel) -> ConnectionRefused? {
        guard let connectionCaps, let peer = channel.remoteAddress?.ipAddress.flatMap(ClientAddresses.canonical),
            !addresses.trustedProxies.contains(peer)
        else { return nil }
        let key = ClientAddresses.limitKey(peer)
        guard connectionCaps.acquire(key) else {
            Metrics.connectionsRefused.increment()
            return ConnectionRefused(limit: connectionCaps.limit)
        }
        channel.closeFuture.whenComplete { _ in connectionCaps.release(key) }
        return nil
    }

    /// A connection closed at once: its address holds `limit` open connections already.
    struct ConnectionRefused: Error, CustomStringConvertible {
        let limit: Int
        var description: String { "the address holds \(limit) open connections already" }
    }

    /// The upgrade answer's headers: a client that offered OpenJam's subprotocol gets it
    /// selected, or a browser would fail the connection.
    static func upgradeHeaders(_ head: HTTPRequestHead) -> HTTPHeaders {
        guard SocketAuth.offersOpenJam(SocketAuth.offered(head.headers["sec-websocket-protocol"])) else { return HTTPHeaders() }
        return HTTPHeaders([("Sec-WebSocket-Protocol", SocketAuth.protocolName)])
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            case .failedUpgrade(let http):
                await refuseFailedUpgrade(http)
            case .realtime(let handler, let head, let channel):
                await runRealtime(handler, head: head, channel: channel, logger: logger)
            }
        } catch {
            logger.debug("a connection ended before it was set up", metadata: ["error": .loggable(error)])
        }
    }

    /// Finds the socket's session (which may be brought back from the store first), attaches
    /// the socket, and stays until it closes; a graceful shutdown closes it normally.
    private func runRealtime(_ handler: NIOLoopBound<RealtimeHandler>, head: HTTPRequestHead, channel: any Channel, logger: Logger) async {
        let loop = channel.eventLoop
        let address = ClientAddresses.limitKey(addresses.resolve(peer: channel.remoteAddress?.ipAddress, head: head))
        var counted = false
        defer { if counted { socketCaps?.release(address) } }
        do {
            let ticket = try await profile.openRealtime(head, context: context)
            // Counted once the token checks out, and given back when the membership does not:
            // sockets refused for either hold no slot, so a stranger behind the same router
            // cannot take a party's slots.
            if let socketCaps {
                counted = socketCaps.acquire(address)
                guard counted else {
                    throw JamError(.rateLimited, "too many open sockets from your address (at most \(socketCaps.limit)); close one first")
                }
            }
            let connection = try await loop.submit {
                RealtimeConnection(user: ticket.user, displayName: ticket.displayName, handler: handler.value, eventLoop: loop)
            }.get()
            try await ticket.session.admitOnReplica(ticket.user)
            try await ticket.session.attach(connection, lastSeq: ticket.lastSeq)
            loop.execute { handler.value.attached(to: ticket.session, as: connection) }
        } catch let error as JamError {
            // A refused socket holds no slot while its close waits for an answer (up to the
            // close's grace period): a stranger's refusals must not crowd out a party's sockets.
            if counted {
                socketCaps?.release(address)
                counted = false
            }
            let refusal = profile.refusal(for: error, clock: context.clock)
            let frame = refusal.frame.map(WebSocketText.frame)
            loop.execute { handler.value.refuse(frame: frame, code: refusal.code, reason: String(error.message.utf8.prefix(120)) ?? "refused") }
        } catch {
            logger.debug("a realtime socket closed while opening", metadata: ["error": .loggable(error)])
        }
        await withGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onGracefulShutdown: {
            loop.execute { handler.value.close(code: CloseCode.normal.rawValue, reason: "the server is stopping") }
        }
    }

    private func refuseFailedUpgrade(_ http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        do {
            try await http.executeThenClose { _, outbound in
                try await outbound.write(contentsOf: [
                    // The version the server speaks, which a client that offered another needs
                    // to hear (RFC 6455 §4.4).
                    .head(HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .secWebSocketVersion: "13", .contentLength: "0"])),
                    .end(nil),
                ])
            }
        } catch {
            // The client is gone already.
        }
    }
}
