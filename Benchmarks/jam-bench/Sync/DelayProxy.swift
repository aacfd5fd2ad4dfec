import JamClient
import JamProtocol
import NIOCore
import NIOPosix

/// One device's network path: one-way delays each way and their jitter.
struct PathShape: Sendable, CustomStringConvertible {
    /// Client → server delay, ms.
    var upMs: Double
    /// Server → client delay, ms.
    var downMs: Double
    /// Each chunk's delay varies uniformly by ± this, ms.
    var jitterMs: Double

    /// `delay ± jitter` with `asymmetry` = up − down split evenly around `delay`.
    init(delayMs: Double, jitterMs: Double, asymmetryMs: Double) {
        upMs = delayMs + asymmetryMs / 2
        downMs = delayMs - asymmetryMs / 2
        self.jitterMs = jitterMs
    }

    /// up − down: the bias no round-trip clock sync can see; its half is the offset error it causes.
    var asymmetryMs: Double { upMs - downMs }

    var description: String {
        String(format: "up %.0f ms, down %.0f ms, ±%.0f ms", upMs, downMs, jitterMs)
    }
}

/// A TCP proxy on 127.0.0.1 that delays each direction of one device's connection.
///
/// This kernel has no netem, so latency is simulated here: every chunk read from one side
/// is written to the other after `delay ± jitter`. TCP delivers in order, so a chunk never
/// overtakes an earlier one (it waits for it, as a later packet waits behind a late one).
struct DelayProxy: Sendable {
    let listener: any Channel
    /// The port devices connect to.
    let port: Int

    /// Listens on an ephemeral port of 127.0.0.1 and forwards to `target` through `shape`.
    static func start(group: any EventLoopGroup, targetHost: String, targetPort: Int, shape: PathShape, seed: UInt64) async throws -> DelayProxy {
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ProxyFrontHandler(targetHost: targetHost, targetPort: targetPort, shape: shape, seed: seed))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else { throw LoadSocket.Failure(description: "the proxy has no port") }
        return DelayProxy(listener: listener, port: port)
    }

    /// Stops accepting (open connections close with their ends).
    func close() async {
        do {
            try await listener.close()
        } catch {
            // Closed already.
        }
    }
}

/// Schedules one direction's chunks: each after its own delay, never before the previous one.
private final class DelayLine {
    private let baseMs: Double
    private let jitterMs: Double
    private var random: SeededRandom
    private(set) var lastDue = NIODeadline.uptimeNanoseconds(0)

    /// A direction delaying by `baseMs ± jitterMs`.
    init(baseMs: Double, jitterMs: Double, seed: UInt64) {
        self.baseMs = baseMs
        self.jitterMs = jitterMs
        self.random = SeededRandom(seed: seed)
    }

    /// When a chunk read now is delivered.
    func due() -> NIODeadline {
        let delay = max(0, baseMs + (jitterMs > 0 ? Double.random(in: -jitterMs...jitterMs, using: &random) : 0))
        var due = NIODeadline.now() + .nanoseconds(Int64(delay * 1_000_000))
        if due < lastDue { due = lastDue }
        lastDue = due
        return due
    }
}

/// The device's side: opens the server connection and carries chunks both ways.
private final class ProxyFrontHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let targetHost: String
    private let targetPort: Int
    private let up: DelayLine
    private let down: DelayLine
    private var back: (any Channel)?
    private var waiting: [ByteBuffer] = []
    private var front: (any Channel)?

    /// A device connection forwarded to the target through `shape`.
    init(targetHost: String, targetPort: Int, shape: PathShape, seed: UInt64) {
        self.targetHost = targetHost
        self.targetPort = targetPort
        up = DelayLine(baseMs: shape.upMs, jitterMs: shape.jitterMs, seed: seed)
        down = DelayLine(baseMs: shape.downMs, jitterMs: shape.jitterMs, seed: seed &+ 0x5bd1_e995)
    }

    /// Opens the server side on the same event loop.
    func channelActive(context: ChannelHandlerContext) {
        let front = context.channel
        self.front = front
        let loop = context.eventLoop
        // Both ends on one event loop, so the delay lines need no locks.
        let connect = ClientBootstrap(group: loop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxyBackHandler())
                }
            }
            .connect(host: targetHost, port: targetPort)
        connect.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let back):
                self.back = back
                do {
                    try back.pipeline.syncOperations.handler(type: ProxyBackHandler.self).attach(self)
                } catch {
                    front.close(promise: nil)
                    return
                }
                for chunk in self.waiting { back.writeAndFlush(chunk, promise: nil) }
                self.waiting = []
            case .failure:
                front.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    /// A chunk from the device, delivered to the server after the up delay.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let chunk = unwrapInboundIn(data)
        context.eventLoop.assumeIsolated().scheduleTask(deadline: up.due()) {
            if let back = self.back {
                back.writeAndFlush(chunk, promise: nil)
            } else {
                self.waiting.append(chunk)
            }
        }
    }

    /// A chunk from the server, delivered to the device after the down delay.
    func fromServer(_ chunk: ByteBuffer, on loop: any EventLoop) {
        loop.assumeIsolated().scheduleTask(deadline: down.due()) {
            self.front?.writeAndFlush(chunk, promise: nil)
        }
    }

    /// The server closed: the device sees it after what was in flight.
    func serverClosed(on loop: any EventLoop) {
        loop.assumeIsolated().scheduleTask(deadline: down.lastDue + .milliseconds(1)) {
            self.front?.close(promise: nil)
        }
    }

    /// The device closed: the server side closes after what was in flight.
    func channelInactive(context: ChannelHandlerContext) {
        let back = self.back
        context.eventLoop.assumeIsolated().scheduleTask(deadline: up.lastDue + .milliseconds(1)) {
            back?.close(promise: nil)
        }
        context.fireChannelInactive()
    }

    /// A broken connection closes.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// The server's side: hands every chunk back to the front handler.
private final class ProxyBackHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var front: ProxyFrontHandler?

    /// Connects this side to the device side.
    func attach(_ front: ProxyFrontHandler) {
        self.front = front
    }

    /// A chunk from the device, delivered to the server after the up delay.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        front?.fromServer(unwrapInboundIn(data), on: context.eventLoop)
    }

    /// The device closed: the server side closes after what was in flight.
    func channelInactive(context: ChannelHandlerContext) {
        front?.serverClosed(on: context.eventLoop)
        front = nil
        context.fireChannelInactive()
    }

    /// A broken connection closes.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
