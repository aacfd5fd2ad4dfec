import JamClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL
import NIOWebSocket
import WSClient
@_spi(WSInternal) import WSCore

/// How one NIO connection becomes a WebSocket, with a limit on the wait for the server's
/// upgrade answer.
///
/// The package's own client channel waits for that answer without end: a server (or a proxy
/// in front of it) that takes the connection and never answers would hold the client in
/// "connecting" for ever, and a cancelled caller with it. Here the channel is in hand, so the
/// wait closes it once `openTimeout` has passed or the caller is cancelled. The WebSocket that
/// follows is the package's own (`WebSocketHandler`: pings, close handshake, frame limits).
struct TimedUpgradeChannel: ClientConnectionChannel {
    /// What a successful upgrade leaves: the WebSocket's frames.
    enum Upgrade: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case declined
    }

    /// The connection and its pending upgrade, handed from `setup` to `handle`.
    struct Pending: Sendable {
        let channel: any Channel
        let upgrade: EventLoopFuture<Upgrade>
        /// Set when the time limit, not the server, ended the wait.
        let timedOut: NIOLockedValueBox<Bool>
    }

    typealias Value = Pending
    typealias Result = WebSocketCloseFrame?

    let target: WebSocketTarget
    let headers: [(String, String)]
    let maxFrameSize: Int
    let closeTimeout: Duration
    let openTimeout: Duration
    let sslContext: NIOSSLContext?
    let handler: WebSocketDataHandler<TransportContext>

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Pending> {
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
            let limit = channel.eventLoop.scheduleTask(in: TimeAmount(openTimeout)) {
                timedOut.withLockedValue { $0 = true }
                channel.close(promise: nil)
            }
            upgrade.whenComplete { _ in limit.cancel() }
            return Pending(channel: channel, upgrade: upgrade, timedOut: timedOut)
        }
    }

    func handle(value pending: Pending, logger: Logger) async throws -> WebSocketCloseFrame? {
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
                throw WebSocketOpenError(description: "the WebSocket to \(target.description) did not open within \(openTimeout)")
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

/// The context the WebSocket's handler runs with: the channel, so that a close the server
/// does not answer can be cut short.
struct TransportContext: WebSocketContext {
    let logger: Logger
    let channel: any Channel
}
