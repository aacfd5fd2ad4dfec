import Foundation
import JamClient
import NIOCore

/// Where a WebSocket URL points, in the pieces a connection and its upgrade request need.
struct WebSocketTarget: Sendable, CustomStringConvertible {
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The request target: the path and the query, as sent.
    let pathAndQuery: String
    /// The `Host` header: the port only when the URL names one.
    let hostHeader: String
    /// The `Origin` header.
    let origin: String

    /// Reads a `ws`, `wss`, `http` or `https` URL; anything else is not a WebSocket address.
    init(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased(), ["ws", "wss", "http", "https"].contains(scheme) else {
            throw WebSocketOpenError(description: "\(url) is not a WebSocket address (ws:// or wss://)")
        }
        guard let host = url.host, !host.isEmpty else {
            throw WebSocketOpenError(description: "\(url) names no host")
        }
        guard let components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: true) else {
            throw WebSocketOpenError(description: "\(url) is not a URL this client can read")
        }
        usesTLS = scheme == "wss" || scheme == "https"
        self.host = host
        port = url.port ?? (usesTLS ? 443 : 80)
        let path = components.percentEncodedPath
        pathAndQuery = (path.isEmpty ? "/" : path) + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
        // An IPv6 literal goes in brackets in both headers.
        let named = host.contains(":") ? "[\(host)]" : host
        hostHeader = url.port.map { "\(named):\($0)" } ?? named
        origin = "\(scheme)://\(named)"
    }

    /// Whether the host is an IPv4 or IPv6 address rather than a name (read by NIO, as the
    /// server reads client addresses).
    var isIPAddress: Bool {
        do {
            _ = try SocketAddress(ipAddress: host, port: port)
            return true
        } catch {
            return false
        }
    }

    var description: String { "\(usesTLS ? "wss" : "ws")://\(hostHeader)\(pathAndQuery)" }
}
