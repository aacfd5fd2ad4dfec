import NIOCore
import NIOHTTP1

/// Lets through to NIO's upgrade handler only the upgrades this server takes: a WebSocket on
/// the profile's realtime path. Any other request's `Upgrade` is removed, so it is served as
/// the plain HTTP request it also is (RFC 9110 §7.8 lets a server ignore an upgrade), and the
/// connection closes after the answer.
///
/// Why it is needed: NIO's typed upgrade handler neither buffers nor passes on a request whose
/// upgrade no upgrader takes (`Upgrade: h2c`, or a WebSocket to a page that is not a socket),
/// so such a request would get no answer at all. The filter judges the first request only and
/// then leaves the pipeline, before a WebSocket's frames could reach it.
final class UpgradeRequestFilter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let takes: (HTTPRequestHead) -> Bool
    private let passedOn: () -> Void

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
        let filtered = Self.filtered(head, takes: takes)
        if filtered.headers.contains(name: "upgrade") { passedOn() }
        context.fireChannelRead(wrapInboundOut(.head(filtered)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// `head` as the upgrade handler should see it: unchanged when it asks for no upgrade or
    /// for one that is taken, without its upgrade otherwise.
    static func filtered(_ head: HTTPRequestHead, takes: (HTTPRequestHead) -> Bool) -> HTTPRequestHead {
        let asked = head.headers[canonicalForm: "upgrade"]
        guard !asked.isEmpty else { return head }
        // NIO's WebSocket upgrader does not even look at a request without these two.
        let webSocket = asked.contains(where: { $0.lowercased() == "websocket" })
            && head.headers.contains(name: "sec-websocket-key") && head.headers.contains(name: "sec-websocket-version")
        if webSocket, takes(head) { return head }
        // NIO's HTTP decoder reads nothing after a request that asked for an upgrade, so the
        // answer is the connection's last.
        var plain = head
        plain.headers.remove(name: "upgrade")
        plain.headers.replaceOrAdd(name: "connection", value: "close")
        return plain
    }
}
