import Crypto
import Foundation
import JamProtocol

/// The id a session gets when its creator names the create with an idempotency key: the same
/// user and key always give the same id, on every node sharing the server secret, so a create
/// sent again finds the session the first one made, even after a restart. Keyed with the
/// secret, so nobody can work out another user's session id from their key.
package struct KeyedSessionIDs: Sendable {
    /// The HMAC key's bytes (`SymmetricKey` is not `Sendable`).
    private let keyBytes: [UInt8]

    /// Ids keyed with the server secret.
    package init(secret: String) {
        keyBytes = Array(SHA256.hash(data: Data("openjam session ids for idempotency keys\u{0}\(secret)".utf8)))
    }

    /// The session id `user`'s create under `idempotencyKey` gets: a UUID of version 8 (RFC
    /// 9562's custom kind), from the first 16 bytes of an HMAC of both.
    package func id(for user: UserID, key idempotencyKey: IdempotencyKey) -> SessionID {
        var bytes = Array(HMAC<SHA256>.authenticationCode(for: Data("\(user.rawValue)\u{0}\(idempotencyKey.value)".utf8), using: SymmetricKey(data: keyBytes)).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return SessionID(parts.joined(separator: "-"))
    }
}
