import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A TCP relay on 127.0.0.1 in front of a server, whose open connections can go silent: from
/// `silenceOpenConnections()` on, their bytes are dropped both ways while both ends stay
/// connected, as when a server's machine or the network path to it goes away without a word.
/// Connections opened later are relayed as before. A connection can also be cut just as its
/// server answers (`cutWhenServerSends`), or have what its client sends held back for a while
/// (`holdWhenClientSends`), or be kept open toward its client for a while after its server
/// has ended it (`lingerAfterServerCloses`). With a TLS context it also ends TLS, as a reverse
/// proxy in front of a server does.
public final class SilentRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let listener: any Channel
    private let links = Mutex<[RelayLink]>([])
    private let cut: RelayTrigger
    private let hold: RelayTrigger
    private let linger: RelayLinger

    private init(listener: any Channel, port: Int, cut: RelayTrigger, hold: RelayTrigger, linger: RelayLinger) {
        self.listener = listener
        self.port = port
        self.cut = cut
        self.hold = hold
        self.linger = linger
    }

    /// Listens on an ephemeral loopback port and relays each connection to `targetPort`; with
    /// `tls`, clients speak TLS to the relay and the relay plain TCP to the server.
    public static func start(to targetPort: Int, tls: NIOSSLContext? = nil) async throws -> SilentRelay {
        let box = Mutex<SilentRelay?>(nil)
        let cut = RelayTrigger()
        let hold = RelayTrigger()
        let linger = RelayLinger()
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { client in
                let link = RelayLink()
                box.withLock { $0?.links.withLock { $0.append(link) } }
                if let tls {
                    do {
                        try client.pipeline.syncOperations.addHandler(SilenceBelowTLS(link: link))
                        try client.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    } catch {
                        return client.eventLoop.makeFailedFuture(error)
                    }
                }
                // The server side connects first; the client's bytes are read only once the
                // child is registered, after this future.
                return ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { server in
                        server.pipeline.addHandler(RelayHandler(link: link, partner: client, cut: cut, linger: linger))
                    }
                    .connect(host: "127.0.0.1", port: targetPort)
                    .flatMap { server in
                        link.server.withLock { $0 = server }
                        return client.pipeline.addHandler(RelayHandler(link: link, partner: server, cut: nil, hold: hold))
                    }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let relay = SilentRelay(listener: listener, port: listener.localAddress?.port ?? 0, cut: cut, hold: hold, linger: linger)
        box.withLock { $0 = relay }
        return relay
    }

    /// Runs `body` with a relay to `targetPort`, and stops the relay however `body` ends.
    public static func with<T: Sendable>(
        to targetPort: Int, tls: NIOSSLContext? = nil, _ body: (SilentRelay) async throws -> T
    ) async throws -> T {
        let relay = try await start(to: targetPort, tls: tls)
        do {
            let value = try await body(relay)
            try await relay.stop()
            return value
        } catch {
            try? await relay.stop()
            throw error
        }
    }

    /// Drops every byte of the connections open now, in both directions, from now on (TLS's
    /// own records too: a close_notify gets no answer either).
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

    /// Arms a hold: from the first bytes any client sends that hold `marker` on, what that
    /// client sends waits in the relay until `releaseHeld()`, as on a slow link.
    public func holdWhenClientSends(_ marker: String) {
        hold.marker.withLock { $0 = Array(marker.utf8) }
    }

    /// Whether the armed hold has started.
    public var isHolding: Bool { hold.marker.withLock { $0 == nil } }

    /// Sends on what the hold kept back, in order, and relays that connection as before.
    public func releaseHeld() {
        for link in links.withLock({ $0 }) { link.release() }
    }

    /// From now on, a connection whose server ends it stays open toward its client for `delay`
    /// more (what the server sent is relayed at once), as a proxy that is slow to close does.
    public func lingerAfterServerCloses(for delay: Duration) {
        linger.delay.withLock { $0 = delay }
    }

    /// How many connections the relay has taken so far.
    public var connectionCount: Int { links.withLock { $0.count } }

    /// Stops listening (relayed connections end with their peers).
    public func stop() async throws {
        try await listener.close()
    }
}

/// One relayed connection's switches.
final class RelayLink: Sendable {
    let silent = Atomic<Bool>(false)
    /// The connection to the server, once made.
    let server = Mutex<(any Channel)?>(nil)
    /// What the client sent while held; nil when not held.
    private let held = Mutex<[ByteBuffer]?>(nil)

    /// Keeps `bytes` back when the link is held, or when they set off `hold`.
    func keeps(_ bytes: ByteBuffer, hold: RelayTrigger) -> Bool {
        held.withLock { held in
            if held != nil {
                held!.append(bytes)
                return true
            }
            guard hold.fires(on: bytes.readableBytesView) else { return false }
            held = [bytes]
            return true
        }
    }

    /// Writes what was held on the server's loop, where the client's reads are relayed too, so
    /// nothing read meanwhile overtakes it.
    func release() {
        guard let server = server.withLock({ $0 }) else { return }
        server.eventLoop.execute {
            let kept = self.held.withLock { held -> [ByteBuffer] in
                defer { held = nil }
                return held ?? []
            }
            for bytes in kept { server.write(bytes, promise: nil) }
            server.flush()
        }
    }
}

/// One armed trigger of the relay (a cut, a hold): the bytes that set it off, until they do.
final class RelayTrigger: Sendable {
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

/// How long the client's side of a connection stays open after its server ended it.
final class RelayLinger: Sendable {
    let delay = Mutex<Duration>(.zero)
}

/// Writes what one side reads to the other, unless the link is silent.
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let link: RelayLink
    private let partner: any Channel
    /// On the server's side only.
    private let cut: RelayTrigger?
    /// On the client's side only.
    private let hold: RelayTrigger?
    /// On the server's side only.
    private let linger: RelayLinger?

    init(link: RelayLink, partner: any Channel, cut: RelayTrigger?, hold: RelayTrigger? = nil, linger: RelayLinger? = nil) {
        self.link = link
        self.partner = partner
        self.cut = cut
        self.hold = hold
        self.linger = linger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !link.silent.load(ordering: .relaxed) else { return }
        let bytes = unwrapInboundIn(data)
        if let cut, cut.fires(on: bytes.readableBytesView) {
            // The answer goes nowhere; the client loses its connection.
            partner.close(promise: nil)
            return
        }
        if let hold, link.keeps(bytes, hold: hold) { return }
        partner.writeAndFlush(bytes, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let partner = partner
        let delay = linger?.delay.withLock { $0 } ?? .zero
        if delay > .zero {
            partner.eventLoop.scheduleTask(in: TimeAmount(delay)) { partner.close(promise: nil) }
        } else {
            partner.close(promise: nil)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Drops a silent link's bytes beneath the relay's TLS, both ways, as a dead path does.
final class SilenceBelowTLS: ChannelDuplexHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let link: RelayLink

    init(link: RelayLink) { self.link = link }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !link.silent.load(ordering: .relaxed) else { return }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !link.silent.load(ordering: .relaxed) else {
            promise?.succeed(())
            return
        }
        context.write(data, promise: promise)
    }
}
