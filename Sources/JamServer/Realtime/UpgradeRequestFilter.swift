import NIOCore
import NIOHTTP1

/// Lets through to NIO's upgrade handler only the upgrades this server takes: a WebSocket on
/// the profile's realtime path, asked for by a connection's first request. Any other request's
/// `Upgrade` is removed, so it is served as the plain HTTP request it also is (RFC 9110 §7.8
/// lets a server ignore an upgrade), and the connection closes after the answer.
///
/// Why it is needed: NIO's typed upgrade handler neither buffers nor passes on a request whose
/// upgrade no upgrader takes (`Upgrade: h2c`, or a WebSocket to a page that is not a socket),
/// so such a request would get no answer at all. And NIO's HTTP decoder reads nothing after a
/// request that asked for an upgrade, so the connection cannot carry another request. The
/// filter leaves the pipeline once it has passed on an upgrade, before the WebSocket's frames
/// could reach it; on a connection of plain requests it stays.
final class UpgradeRequestFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let takes: (HTTPRequestHead) -> Bool
    private let passedOn: () -> Void
    /// Only a connection's first request can be upgraded: NIO's upgrade handler leaves after it.
    private var first = true

    /// `takes` says whether a WebSocket upgrade of this request would be taken; `passedOn` hears
    /// when an upgrade goes on to NIO's handler.
    init(takes: @escaping (HTTPRequestHead) -> Bool, passedOn: @escaping () -> Void) {
        self.takes = takes
        self.passedOn = passedOn
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let first = self.first
        self.first = false
        // Most requests ask for no upgrade: they go on as they came, their headers read once.
        guard head.headers.contains(name: "upgrade") else {
            context.fireChannelRead(data)
            return
        }
        let filtered = Self.filtered(head, takes: first ? takes : { _ in false })
        guard filtered.headers.contains(name: "upgrade") else {
            context.fireChannelRead(wrapInboundOut(.head(filtered)))
            return
        }
        passedOn()
        context.fireChannelRead(wrapInboundOut(.head(filtered)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// `head` as the upgrade handler should see it: unchanged when it asks for no upgrade or
    /// for one that is taken, without its upgrade (and closing its connection) otherwise.
    static func filtered(_ head: HTTPRequestHead, takes: (HTTPRequestHead) -> Bool) -> HTTPRequestHead {
        // Present at all, even empty, the header makes NIO's decoder treat the request as an
        // upgrade.
        guard head.headers.contains(name: "upgrade") else { return head }
        // Without both of these NIO's WebSocket upgrader fails the request, and NIO keeps no
        // copy of it to answer.
        let webSocket = head.headers[canonicalForm: "upgrade"].contains(where: { $0.lowercased() == "websocket" })
            && head.headers.contains(name: "sec-websocket-key") && head.headers.contains(name: "sec-websocket-version")
        if webSocket, takes(head) { return head }
        var plain = head
        plain.headers.remove(name: "upgrade")
        plain.headers.replaceOrAdd(name: "connection", value: "close")
        return plain
    }
}
