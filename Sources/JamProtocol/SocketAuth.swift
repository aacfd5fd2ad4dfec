import Foundation

/// How a realtime socket carries its token without putting it in the URL (URLs end up in
/// access logs and browser history): clients that can set headers send
/// `Authorization: Bearer <token>`; browsers, whose WebSocket API sets no headers, offer the
/// subprotocols `openjam` and `bearer.<token>`, and the server answers `openjam`.
public enum SocketAuth {
    /// The subprotocol the server selects when a client offers it.
    public static let protocolName = "openjam"
    /// The prefix of the subprotocol that carries the token (a token's characters, base64url
    /// and dots, are all allowed in a subprotocol name).
    public static let tokenPrefix = "bearer."

    /// The subprotocols a browser offers for `token`.
    public static func offeredProtocols(token: String) -> [String] {
        [protocolName, tokenPrefix + token]
    }

    /// The subprotocols offered in `Sec-WebSocket-Protocol` header values (comma-separated).
    public static func offered(_ headerValues: [String]) -> [Substring] {
        headerValues.flatMap { $0.split(separator: ",") }.map { Substring($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.isEmpty }
    }

    /// The token among the offered subprotocols, if one carries it.
    public static func token(offered: [Substring]) -> String? {
        offered.first { $0.hasPrefix(tokenPrefix) }.map { String($0.dropFirst(tokenPrefix.count)) }
    }

    /// Whether the client offered OpenJam's subprotocol (the server must then select it, or a
    /// browser fails the connection).
    public static func offersOpenJam(_ offered: [Substring]) -> Bool {
        offered.contains { $0 == protocolName }
    }
}
