import Foundation
import JamProtocol

/// The token a request carries, one rule for every profile: `Authorization: Bearer <token>`,
/// or, for a browser's socket (whose API sets no headers), the `bearer.<token>` subprotocol
/// (`SocketAuth`). A token in the URL is refused: URLs end up in access logs.
package enum BearerToken {
    /// How a profile reads the `Authorization` header.
    package enum HeaderRule: Sendable {
        /// `Bearer <token>`, the scheme in any case; anything else is refused.
        case bearer
        /// Every `Bearer ` removed and the rest taken as the token, so a bare token works too:
        /// QueueIT's backend reads the header so.
        case bearerRemoved
    }

    /// The token, nil when the request carries none; throws when the header breaks `rule` or
    /// the token is in the URL.
    package static func read(authorization: String?, rule: HeaderRule = .bearer, subprotocols: [String] = [], query: Substring? = nil) throws(JamError) -> String? {
        // First, whatever else the request carries: the URL is in the logs already.
        if query != nil {
            throw JamError(
                .unauthorized,
                "a token does not go in the URL (it would end up in access logs): send 'Authorization: Bearer <token>', or from a browser the WebSocket subprotocol 'bearer.<token>'")
        }
        if let authorization {
            switch rule {
            case .bearer:
                let parts = authorization.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                    throw JamError(.unauthorized, "the Authorization header must be 'Bearer <token>'")
                }
                return String(parts[1]).trimmingCharacters(in: .whitespaces)
            case .bearerRemoved:
                return authorization.replacingOccurrences(of: "Bearer ", with: "")
            }
        }
        return SocketAuth.token(offered: SocketAuth.offered(subprotocols))
    }

    /// The one `Authorization` header of an OpenJam request, nil when it has none. Two would
    /// be read as one, joined with a comma, and refused as a malformed token; the profiles
    /// that mimic other servers read the first, as those servers do.
    package static func single(_ authorizations: [String]) throws(JamError) -> String? {
        if authorizations.count > 1 { throw JamError(.unauthorized, "send one Authorization header, not \(authorizations.count)") }
        return authorizations.first
    }
}
