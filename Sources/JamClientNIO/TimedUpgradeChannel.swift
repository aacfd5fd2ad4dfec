import JamClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
@_spi(WSInternal) import WSCore

/// How a WebSocket is opened on NIO, from the name's lookup to the server's upgrade answer,
/// within one time limit.
///
/// The package's own client waits for the upgrade answer without end: a server (or a proxy
/// in front of it) that takes the connection and never answers would hold the client in
/// "connecting" for ever, and a cancelled caller with it. Here the channel is in hand, so the
/// wait closes it once `openTimeout` has passed or the caller is cancelled; the connect before
/// it shares the same limit and stops waiting at a cancel too. The WebSocket that follows is
/// the package's own (`WebSocketHandler`: pings, close handshake, frame limits).
struct TimedUpgradeChannel: Sendable {
    /// What a successful upgrade leaves: the WebSocket's frames.
    enum Upgrade: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case declined
    }

    /// The connection and its pending upgrade, handed from `connect` to `handle`.
    struct Pending: Sendable {
        let channel: any Channel
        let upgrade: EventLoopFuture<Upgrade>
        /// Set when the time limit, not the server, ended the wait.
        let timedOut: NIOLockedValueBox<Bool>
    }

    let target: WebSocketTarget
    let headers: [(String, String)]
    let maxFrameSize: Int
    let closeTimeout: Duration
    let openTimeout: Duration
    /// When the open fails if it has not finished: `openTimeout` after it began.
    let deadline: NIODeadline
    let sslContext: NIOSSLContext?
    let handler: WebSocketDataHandler<TransportContext>

    /// Connects to the target (the name's lookup included), sets the connection up for the
    /// upgrade, and returns it with the upgrade pending. A connection not made by the deadline
    /// fails the open; a cancelled caller stops waiting at once, and the connects still under
    /// way are called off.
    func connect() async throws -> Pending {
        try Task.checkCancellation()
        // Several connections may be tried for one name (IPv6 and IPv4): each is set up, and
        // the one NIO keeps is looked up by its identity. Once the caller is cancelled, those
        // under way are closed (which ends their connects) and no new one is set up.
        let attempts = NIOLockedValueBox<(prepared: [ObjectIdentifier: Pending], cancelled: Bool)>(([:], false))
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connectTimeout(max(deadline - .now(), .nanoseconds(1)))
            .channelInitializer { channel in
                setup(channel: channel).flatMapThrowing { pending in
                    let cancelled = attempts.withLockedValue { attempts in
                        if !attempts.cancelled { attempts.prepared[ObjectIdentifier(channel)] = pending }
                        return attempts.cancelled
                    }
                    if cancelled { throw CancellationError() }
                }
            }
        let target = target
        let connecting: EventLoopFuture<Pending> = bootstrap.connect(host: target.host, port: target.port).flatMapThrowing { channel in
            guard let pending = attempts.withLockedValue({ $0.prepared[ObjectIdentifier(channel)] }) else {
                channel.close(promise: nil)
                throw WebSocketOpenError(description: "the connection to \(target.description) was made without being set up")
            }
            return pending
        }
        do {
            return try await connecting.valueUnlessCancelled { pending in pending.channel.close(promise: nil) }
        } catch is CancellationError {
            let underWay = attempts.withLockedValue { attempts in
                attempts.cancelled = true
                return attempts.prepared.values.map(\.channel)
            }
            for channel in underWay { channel.close(promise: nil) }
            throw CancellationError()
        } catch let error as WebSocketOpenError {
            throw error
        } catch {
            // The deadline ends a connect in progress either way: NIO's connect timeout, or the
            // limit armed on the connection closing it first.
            let timedOut = attempts.withLockedValue { $0.prepared.values.contains { $0.timedOut.withLockedValue { $0 } } }
            if timedOut || Self.isConnectTimeout(error) {
                throw WebSocketOpenError.timedOut(target.description, after: openTimeout)
            }
            throw WebSocketOpenError(description: "could not connect to \(target.description): \(error)")
        }
    }

    /// Whether NIO gave up on the connect at its timeout.
    private static func isConnectTimeout(_ error: any Error) -> Bool {
        guard case .connectTimeout = error as? ChannelError else { return false }
        return true
    }

    /// Adds TLS and the HTTP upgrade to a new connection, and arms the deadline.
    func setup(channel: any Channel) -> EventLoopFuture<Pending> {
        channel.eventLoop.makeCompletedFuture {
            if let sslContext {
                // An address has no name to send (SNI refuses one); NIOSSL then checks the
                // certificate's IP entries against the address instead.
                let tls = try NIOSSLClientHandler(context: sslContext, serverHostname: target.isIPAddress ? nil : target.host)
                try channel.pipeline.syncOperations.addHandler(tls, position: .first)
            }
            let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                configuration: pipelineConfiguration())
            // Closing the channel fails the pending upgrade (its handler is removed), which is
            // what ends the wait.
            let timedOut = NIOLockedValueBox(false)
            let limit = channel.eventLoop.scheduleTask(deadline: deadline) {
                timedOut.withLockedValue { $0 = true }
                channel.close(promise: nil)
            }
            upgrade.whenComplete { _ in limit.cancel() }
            return Pending(channel: channel, upgrade: upgrade, timedOut: timedOut)
        }
    }

    /// Waits for the upgrade of `pending`'s connection and runs the WebSocket until it closes;
    /// returns the close frame the server sent, if any.
    func handle(_ pending: Pending, logger: Logger) async throws -> WebSocketCloseFrame? {
        let upgrade: Upgrade
        do {
            upgrade = try await withTaskCancellationHandler {
                try await pending.upgrade.get()
            } onCancel: {
                pending.channel.close(promise: nil)
            }
        } catch {
            // NIO's upgrade handler leaves the connection open when the upgrade fails.
            pending.channel.close(promise: nil)
            if pending.timedOut.withLockedValue({ $0 }) {
                throw WebSocketOpenError.timedOut(target.description, after: openTimeout)
            }
            try Task.checkCancellation()
            throw WebSocketOpenError(description: "the WebSocket to \(target.description) could not be opened: \(error)")
        }
        switch upgrade {
        case .webSocket(let frames):
            return try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(
                    extensions: [], autoPing: .disabled, closeTimeout: closeTimeout, validateUTF8: false, maxFrameSize: maxFrameSize),
                asyncChannel: frames,
                context: TransportContext(logger: logger, channel: pending.channel),
                handler: handler)
        case .declined:
            pending.channel.close(promise: nil)
            throw WebSocketOpenError(description: "the server at \(target.description) did not upgrade the connection to a WebSocket")
        }
    }

    private func pipelineConfiguration() -> NIOUpgradableHTTPClientPipelineConfiguration<Upgrade> {
        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maxFrameSize) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                .webSocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
            }
        }
        var fields = HTTPHeaders()
        fields.replaceOrAdd(name: "Host", value: target.hostHeader)
        fields.replaceOrAdd(name: "Origin", value: target.origin)
        fields.add(contentsOf: headers)
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.pathAndQuery, headers: fields)
        let upgrades = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
            upgradeRequestHead: request, upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.declined) })
        var configuration = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: upgrades)
        // Frames the server sends right behind its upgrade answer belong to the WebSocket.
        configuration.leftOverBytesStrategy = .forwardBytes
        return configuration
    }
}

/// The context the WebSocket's handler runs with: the channel, so that the transport can end
/// the connection beneath TLS.
struct TransportContext: WebSocketContext {
    let logger: Logger
    let channel: any Channel
}
