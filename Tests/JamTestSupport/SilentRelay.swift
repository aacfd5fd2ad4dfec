import NIOCore
import NIOPosix
import Synchronization

/// A TCP relay on 127.0.0.1 in front of a server, whose open connections can go silent: from
/// `silenceOpenConnections()` on, their bytes are dropped both ways while both ends stay
/// connected, as when a server's machine or the network path to it goes away without a word.
/// Connections opened later are relayed as before. A connection can also be cut just as its
/// server answers (`cutWhenServerSends`).
public final class SilentRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let listener: any Channel
    private let links = Mutex<[RelayLink]>([])
    private let cut: RelayCut

    private init(listener: any Channel, port: Int, cut: RelayCut) {
        self.listener = listener
        self.port = port
        self.cut = cut
    }

    /// Listens on an ephemeral loopback port and relays each connection to `targetPort`.
    public static func start(to targetPort: Int) async throws -> SilentRelay {
        let box = Mutex<SilentRelay?>(nil)
        let cut = RelayCut()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                let link = RelayLink()
                box.withLock { $0?.links.withLock { $0.append(link) } }
                // The server side connects first; the client's bytes are read only once the
                // child is registered, after this future.
                return ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { server in
                        server.pipeline.addHandler(RelayHandler(link: link, partner: client, cut: cut))
                    }
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMap { server in client.pipeline.addHandler(RelayHandler(link: link, partner: server, cut: nil)) }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let relay = SilentRelay(listener: listener, port: listener.localAddress?.port ?? 0, cut: cut)
        box.withLock { $0 = relay }
        return relay
    }

    /// Runs `body` with a relay to `targetPort`, and stops the relay however `body` ends.
    public static func with<T: Sendable>(to targetPort: Int, _ body: (SilentRelay) async throws -> T) async throws -> T {
        let relay = try await start(to: targetPort)
        do {
            let value = try await body(relay)
            try await relay.stop()
            return value
        } catch {
            try? await relay.stop()
            throw error
        }
    }

    /// Drops every byte of the connections open now, in both directions, from now on.
    public func silenceOpenConnections() {
        links.withLock { links in
            for link in links { link.silent.store(true, ordering: .relaxed) }
        }
    }

    /// Arms a cut: the first bytes any server sends that hold `marker` are dropped, and that
    /// connection's client is disconnected. The server has done what it was asked; the client
    /// never hears so, as when a link breaks on the way back.
    public func cutWhenServerSends(_ marker: String) {
        cut.marker.withLock { $0 = Array(marker.utf8) }
    }

    /// Whether the armed cut has happened.
    public var hasCut: Bool { cut.marker.withLock { $0 == nil } }

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

/// The relay's one armed cut: the bytes that set it off, until they do.
final class RelayCut: Sendable {
    let marker = Mutex<[UInt8]?>(nil)

    /// True, once, for the first chunk that holds the armed marker.
    func fires(on bytes: ByteBufferView) -> Bool {
        marker.withLock { marker in
            guard let wanted = marker, !wanted.isEmpty, bytes.count >= wanted.count else { return false }
            let chunk = Array(bytes)
            for start in 0...(chunk.count - wanted.count) where chunk[start..<(start + wanted.count)].elementsEqual(wanted) {
                marker = nil
                return true
            }
            return false
        }
    }
}

/// Writes what one side reads to the other, unless the link is silent.
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let link: RelayLink
    private let partner: any Channel
    /// On the server's side only.
    private let cut: RelayCut?

    init(link: RelayLink, partner: any Channel, cut: RelayCut?) {
        self.link = link
        self.partner = partner
        self.cut = cut
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !link.silent.load(ordering: .relaxed) else { return }
        let bytes = unwrapInboundIn(data)
        if let cut, cut.fires(on: bytes.readableBytesView) {
            // The answer goes nowhere; the client loses its connection.
            partner.close(promise: nil)
            return
        }
        partner.writeAndFlush(bytes, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
