import Foundation
import JamProtocol

/// The token a request carries, one rule for every profile: `Authorization: Bearer <token>`,
/// or else (for sockets, whose browser API sets no headers) `?token=`.
package enum BearerToken {
    /// The token, nil when the request carries none; throws when the header is not `Bearer <token>`.
    package static func read(authorization: String?, query: Substring? = nil) throws(JamError) -> String? {
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw JamError(.unauthorized, "the Authorization header must be 'Bearer <token>'")
            }
            return String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
        return query.map(String.init)
    }
}
