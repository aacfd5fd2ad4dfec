import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Who a request comes from, for per-address limits: its peer, or, when the peer is a proxy
/// this server trusts (`--trusted-proxy`, the cluster's HAProxy), the address that proxy says
/// it forwards. Behind a proxy every peer is the proxy, so without this every member would
/// share one address's budget.
package struct ClientAddresses: Sendable {
    /// Peer addresses whose `X-Forwarded-For` counts, in canonical form (`canonical(_:)`).
    package let trustedProxies: Set<String>

    /// `trustedProxies` are IP addresses in any of their spellings; others are ignored (the
    /// command line refuses them first).
    package init(trustedProxies: Set<String>) {
        self.trustedProxies = Set(trustedProxies.compactMap(Self.canonical))
    }

    /// The client's address: the rightmost `X-Forwarded-For` entry that is not itself a trusted
    /// proxy, when the peer is trusted; the peer otherwise. Entries to the left of that one
    /// come from the client and could say anything, so they are never read; an entry that is
    /// not an IP address leaves the proxy as all that can be named.
    package func resolve(peer: String?, forwardedFor: [String]) -> String {
        guard let peer else { return "unknown" }
        let client = Self.canonical(peer) ?? peer
        guard trustedProxies.contains(client) else { return client }
        let hops = forwardedFor.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        for hop in hops.reversed() {
            guard let address = Self.canonical(hop.trimmingCharacters(in: .whitespaces)) else { return client }
            if !trustedProxies.contains(address) { return address }
        }
        return client
    }

    /// The address of a request whose head is `head`, from `peer`.
    package func resolve(peer: String?, head: HTTPRequestHead) -> String {
        resolve(peer: peer, forwardedFor: head.headers["X-Forwarded-For"])
    }

    /// Whether `text` is an IP address, the only form a socket's peer takes.
    package static func isAddress(_ text: String) -> Bool {
        canonical(text) != nil
    }

    /// The client a per-address limit counts for `address` (as `resolve` returns it): an IPv4
    /// address itself, an IPv6 address by its /64 prefix (`2001:db8:0:1::/64`). One IPv6 host
    /// commonly holds a whole /64 and may send from any address in it, so counting each address
    /// apart would give it billions of budgets; a /64 is one home or one phone, as one IPv4
    /// address behind a router is.
    package static func limitKey(_ address: String) -> String {
        guard case .v6(let v6)? = try? SocketAddress(ipAddress: address, port: 0) else { return address }
        let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// `text` as one spelling per address: IPv6 as the system writes it (`::1`, lower case),
    /// and an IPv4 client of a dual-stack socket (`::ffff:10.0.0.5`) as IPv4; nil when `text`
    /// is not an IP address.
    package static func canonical(_ text: String) -> String? {
        let address: SocketAddress
        do {
            address = try SocketAddress(ipAddress: text, port: 0)
        } catch {
            return nil
        }
        guard let written = address.ipAddress else { return nil }
        let mapped = "::ffff:"
        if written.hasPrefix(mapped), written.dropFirst(mapped.count).contains(".") { return String(written.dropFirst(mapped.count)) }
        return written
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
