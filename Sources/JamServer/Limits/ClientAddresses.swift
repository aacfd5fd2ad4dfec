import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Who a request comes from, for per-address limits: its peer, or, when the peer is a proxy
/// this server trusts (`--trusted-proxy`, the cluster's HAProxy), the address that proxy says
/// it forwards. Behind a proxy every peer is the proxy, so without this every member would
/// share one address's budget.
package struct ClientAddresses: Sendable {
    /// Peer addresses whose `X-Forwarded-For` counts, exactly as the socket reports them.
    package let trustedProxies: Set<String>

    package init(trustedProxies: Set<String>) {
        self.trustedProxies = trustedProxies
    }

    /// The client's address: the rightmost `X-Forwarded-For` entry that is not itself a trusted
    /// proxy, when the peer is trusted; the peer otherwise. Entries to the left of that one
    /// come from the client and could say anything, so they are never read.
    package func resolve(peer: String?, forwardedFor: [String]) -> String {
        guard let peer else { return "unknown" }
        guard trustedProxies.contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where !trustedProxies.contains(hop) {
            // An empty entry is a malformed header: the proxy is all that can be named.
            return hop.isEmpty ? peer : hop
        }
        return peer
    }

    /// Whether `text` is an IP address, the only form a socket's peer takes.
    package static func isAddress(_ text: String) -> Bool {
        do {
            _ = try SocketAddress(ipAddress: text, port: 0)
            return true
        } catch {
            return false
        }
    }

    /// The address of a request whose head is `head`, from `peer`.
    package func resolve(peer: String?, head: HTTPRequestHead) -> String {
        resolve(peer: peer, forwardedFor: head.headers["X-Forwarded-For"])
    }
}

/// Sets `JamRequestContext.clientAddress` before any limit reads it.
struct ClientAddressMiddleware: RouterMiddleware {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    let addresses: ClientAddresses

    func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.clientAddress = addresses.resolve(peer: context.remoteAddress?.ipAddress, forwardedFor: request.headers[values: Self.forwardedFor])
        return try await next(request, context)
    }
}
