import NIOCore
import NIOPosix
import Synchronization

/// A TCP relay on 127.0.0.1 in front of a server, whose open connections can go silent: from
/// `silenceOpenConnections()` on, their bytes are dropped both ways while both ends stay
/// connected, as when a server's machine or the network path to it goes away without a word.
/// Connections opened later are relayed as before.
public final class SilentRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let listener: any Channel
    private let links = Mutex<[RelayLink]>([])

    private init(listener: any Channel, port: Int) {
        self.listener = listener
        self.port = port
    }

    /// Listens on an ephemeral loopback port and relays each connection to `targetPort`.
    public static func start(to targetPort: Int) async throws -> SilentRelay {
        let box = Mutex<SilentRelay?>(nil)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                let link = RelayLink()
                box.withLock { $0?.links.withLock { $0.append(link) } }
                // The server side connects first; the client's bytes are read only once the
                // child is registered, after this future.
                return ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { server in
                        server.pipeline.addHandler(RelayHandler(link: link, partner: client))
                    }
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMap { server in client.pipeline.addHandler(RelayHandler(link: link, partner: server)) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let relay = SilentRelay(listener: listener, port: listener.localAddress?.port ?? 0)
        box.withLock { $0 = relay }
        return relay
    }

    /// Drops every byte of the connections open now, in both directions, from now on.
    public func silenceOpenConnections() {
        links.withLock { links in
            for link in links { link.silent.store(true, ordering: .relaxed) }
        }
    }

    /// How many connections the relay has taken so far.
    public var connectionCount: Int { links.withLock { $0.count } }

    /// Stops listening (relayed connections end with their peers).
    public func stop() async throws {
        try await listener.close()
    }
}

/// One relayed connection's switch.
final class RelayLink: Sendable {
    let silent = Atomic<Bool>(false)
}

/// Writes what one side reads to the other, unless the link is silent.
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let link: RelayLink
    private let partner: any Channel

    init(link: RelayLink, partner: any Channel) {
        self.link = link
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !link.silent.load(ordering: .relaxed) else { return }
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
