import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// Gets a load socket's frames, on the socket's event loop only.
///
/// Load sockets are plain NIO handlers rather than async sequences: a thousand of them must
/// cost the benchmark far less CPU than they cost the server (checked against an echo server).
protocol FrameSink: AnyObject, Sendable {
    /// A complete text message and the monotonic instant (ns) it was read.
    func text(_ buffer: ByteBuffer, receivedAt: UInt64)
    /// The socket closed; `code` is the server's close code, if it sent one.
    func closed(code: UInt16?)
}

/// A raw WebSocket client connection on SwiftNIO, used by the load generators.
struct LoadSocket: Sendable {
    let channel: any Channel

    /// The loop every callback of this socket runs on.
    var eventLoop: any EventLoop { channel.eventLoop }

    /// Failure to open a socket.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// How the WebSocket handshake ended.
    private enum Upgrade: Sendable {
        case upgraded(any Channel)
        case refused
    }

    /// Opens `ws://host:port/path` from `source` and hands its frames to `sink`.
    static func connect(
        group: any EventLoopGroup, host: String, port: Int, path: String, token: String? = nil, source: String? = nil, sink: any FrameSink
    ) async throws -> LoadSocket {
        var bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let negotiation: EventLoopFuture<Upgrade>
        do {
            negotiation = try await bootstrap.connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: 1 << 24) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(LoadFrameHandler(sink: sink))
                            return Upgrade.upgraded(channel)
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(host):\(port)")
                    headers.add(name: "Content-Length", value: "0")
                    if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.close(promise: nil)
                            return channel.eventLoop.makeSucceededFuture(.refused)
                        })
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    // A server may send its first frame in the same read as the 101 response
                    // (PirateRadio's Node server does): those bytes are the WebSocket's, not noise.
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        } catch {
            throw Failure(description: "cannot connect to \(host):\(port) from \(source ?? "default"): \(error)")
        }
        switch try await negotiation.get() {
        case .upgraded(let channel):
            return LoadSocket(channel: channel)
        case .refused:
            throw Failure(description: "the server refused the WebSocket upgrade of \(path.prefix(80))")
        }
    }

    /// Sends a text message (from any thread; NIO hops to the socket's loop).
    func send(_ text: String) {
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: channel.allocator.buffer(string: text))
        channel.writeAndFlush(frame, promise: nil)
    }

    /// Sends a close frame (1000) and closes the connection.
    func close() async {
        var data = channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: .normalClosure)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: data)
        do {
            try await channel.writeAndFlush(frame)
        } catch {
            // Already closed by the server: nothing left to say.
        }
        do {
            try await channel.close()
        } catch {
            // Closing an already closed channel fails; the socket is gone either way.
        }
    }
}

/// Reassembles text messages, answers pings and reports closes to the sink.
private final class LoadFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let sink: any FrameSink
    private var fragments: ByteBuffer?
    private var closeCode: UInt16?
    private var reported = false

    /// A handler feeding `sink`.
    init(sink: any FrameSink) {
        self.sink = sink
    }

    /// Delivers text (reassembled), answers pings, notes the close code.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            if frame.fin {
                sink.text(frame.unmaskedData, receivedAt: MonoTime.nanos())
            } else {
                fragments = frame.unmaskedData
            }
        case .continuation:
            guard var buffer = fragments else { return }
            var more = frame.unmaskedData
            buffer.writeBuffer(&more)
            if frame.fin {
                fragments = nil
                sink.text(buffer, receivedAt: MonoTime.nanos())
            } else {
                fragments = buffer
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            closeCode = data.readInteger(as: UInt16.self)
            context.close(promise: nil)
        default:
            break
        }
    }

    /// Tells the sink once that the socket is gone.
    func channelInactive(context: ChannelHandlerContext) {
        if !reported {
            reported = true
            sink.closed(code: closeCode)
        }
        context.fireChannelInactive()
    }

    /// A broken connection closes; the sink hears of it from `channelInactive`.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
